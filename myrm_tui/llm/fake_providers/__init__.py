"""Providers that answer without a real model: the scripted fake, recorded replay feeds and the
benchmark's summarizers, and the switch that keeps them out of a user's choices."""
