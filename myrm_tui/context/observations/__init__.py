"""What old tool outputs become: the masker's tiers, the lines worth keeping, the task's intent,
the user's pins and the relevance order of eviction."""
