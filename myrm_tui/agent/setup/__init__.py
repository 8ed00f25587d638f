"""What an Agent is built from: model info, tools, the system prompt and its per-model discipline,
the fingerprint, how a configured model is called and whether its window fits."""
