"""Undo and rewind: the checkpoints a turn's tools leave and the walk that restores them."""
