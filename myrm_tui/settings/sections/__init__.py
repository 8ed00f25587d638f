"""The shapes of the config's own tables (hooks, MCP servers, model overrides, permissions) and of a filter."""
