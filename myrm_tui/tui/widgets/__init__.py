"""The widgets, each with its sibling `.tcss`: the prompt, the status bar, the ring, the panels and
the transcript with its blocks."""
