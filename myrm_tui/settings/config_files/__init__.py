"""The config files: the layered loader, each file's tables, the environment and flag layers,
the workspace gate, and writing a value back without losing what the user wrote."""
