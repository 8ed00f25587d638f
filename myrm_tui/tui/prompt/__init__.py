"""What the prompt box offers: completion and fuzzy matching, slash commands and the command table,
custom commands and the palette, pastes, images, the prompt history and queued messages."""
