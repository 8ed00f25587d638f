"""The bodies of the `myrm` subcommands; `cli.py` only declares flags and imports these lazily."""
