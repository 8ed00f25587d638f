"""`myrm run`: one turn without the TUI, its progress lines, its JSON and stream-json output."""
