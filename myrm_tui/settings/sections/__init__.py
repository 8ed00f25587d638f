"""The shapes of the config's own tables: hooks, MCP servers, model overrides, permission rules."""
