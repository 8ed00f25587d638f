"""MCP (Model Context Protocol) client: servers from config, their tools offered to the model.

Modules, one job each: `config` (server entries from `config.toml` and `.mcp.json`, stdlib only,
read by the settings loader), `expand` (`${VAR}` in those entries), `names` (the `mcp__server__tool`
names the model sees), `transport` and `connection` (one running server, on the official SDK),
`manager` (every server of the app: background start, restart, shutdown), `tool` and `result`
(a server tool as a myrm Tool, and its result as text for the prompt), `probe` (`myrm doctor`).

Nothing here imports the SDK at module import: `import mcp` costs ~0.5 s, which must never land
on the first paint or on a run without servers.
"""
