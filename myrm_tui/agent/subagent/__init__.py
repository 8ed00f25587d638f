"""Child agents for delegated sub-problems (the `task` tool): run, progress, handover, result."""
