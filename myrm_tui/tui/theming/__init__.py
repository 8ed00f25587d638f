"""Themes: the TOML theme files and the app's registration and choice of them."""
