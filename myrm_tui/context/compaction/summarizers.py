"""The synchronous summarize slot of the engine: removed messages in, a summary text out.

The engine leaves it empty in the product: a removed run gets a summary a model prepared in the
background (`ContextEngine.maintain`), or the extractive one. Tests plug a function in to pin
the node text. The benchmark's fake summarizers are not here: they are a model behind litellm
(`myrm_tui/llm/fake_providers/replay_summarizers.py`), reached through the summary client like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Summarizer = Callable[[Sequence[dict[str, Any]]], str]
