"""`myrm acp`: myrm as an Agent Client Protocol agent over stdio, for editors (Zed and others).

The same `Agent.turn` the TUI and `myrm run` drive; this package only translates: the client's
requests into sessions and turns (`server.py`), the turn's events into session updates
(`updates.py`), approvals into `session/request_permission` (`permission.py`), stored sessions
into the history a `session/load` replays (`history.py`). The official SDK (`acp`) is imported
only here and only when the command runs.
"""
