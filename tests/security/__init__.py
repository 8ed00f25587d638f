"""Attacks on myrm's trust boundaries, one module per class of attack."""
