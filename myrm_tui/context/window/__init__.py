"""How big the prompt may be: the budget equation, the engine's proportional knobs, token counts,
the threshold ladder and when a compaction pays for itself."""
