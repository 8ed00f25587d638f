"""The Textual front end: the only package that imports Textual (see tests/test_layers.py)."""
