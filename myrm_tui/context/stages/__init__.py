"""The engine's stages, one module each, in pipeline order (see context/engine.py)."""
