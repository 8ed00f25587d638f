"""What myrm knows about models: the registry and litellm's map, names as people type them, the
checks of a configured name, the default and lite models, and which keys are present."""
