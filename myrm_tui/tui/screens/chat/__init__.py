"""The chat screen and the collaborators it hands its jobs to: commands, dialogs, the context views,
the edit queue, the completion popup and its keys."""
