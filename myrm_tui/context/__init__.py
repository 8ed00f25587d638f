"""The context engine: what the model sees each turn (the foundation's pass-through for now)."""
