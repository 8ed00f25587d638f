"""Structured LLM summaries of old history, stored as a DAG (leaf → condensed).

Pure modules (schema, footer, chunking, auditor, redact, extractive, prompts, condense, breaker)
plus one async entry point that may call a model (`client.summarize`). No Textual; litellm only
inside the default call of `client`.
"""

from myrm_tui.context.summary.schema import FileChange, StructuredSummary, render

__all__ = ["FileChange", "StructuredSummary", "render"]
