"""A damaged store: what state it is in, what it still gives, and the rebuild."""
