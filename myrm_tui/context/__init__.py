"""The context engine: what the model sees each turn, built from the stored log (docs/context-engine.md)."""
