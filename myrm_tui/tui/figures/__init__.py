"""The figures the ring, the health screen and the reply lines show, read from stored events (pure)."""
