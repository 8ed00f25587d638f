"""The app's screens: chat, sessions, settings, health, fork, rewind, undo, trust, MCP and the dialogs."""
