"""Compaction: which rows leave the prompt, the summary DAG and area that stand in for them, and the
summaries written ahead of the event that needs them."""
