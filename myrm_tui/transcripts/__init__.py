"""A stored session rendered for people or programs (`sessions show`/`export`, /export, the sessions screen).

Why its own package below the TUI and the CLI: both front ends export the same way, and the TUI
must not import the CLI's command bodies (that was a cycle: cli_commands imports tui).
"""
