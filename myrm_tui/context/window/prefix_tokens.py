"""The tokens of a prompt's fixed prefix (system prompt + tool schemas), counted once per distinct prefix.

Why its own module: the engine counts it at every assemble, and the summary preparation
(compaction/prepared_summaries.py) and the window check (room.py) must count it the same way; the engine imports
both of those, so the count lives below all three.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from myrm_tui.context.window.tokens import count_message_tokens, count_tools_tokens

# Distinct prefixes remembered: one per model and tool set in practice; the bound only stops a
# long-lived process that cycles through many from growing without end.
_FIXED_MEMO_SIZE = 64


def tools_key(tools: Sequence[dict[str, Any]]) -> str:
    return json.dumps(list(tools), sort_keys=True)


def fixed_tokens(system_prompt: str, tools_key: str | tuple[dict[str, Any], ...], model: str) -> int:
    """System prompt + tool schemas, counted once per distinct prefix (a memo of a pure count:
    the same text always has the same tokens, whichever session asks)."""
    return _fixed_tokens(system_prompt, tools_key if isinstance(tools_key, str) else "", model)


@lru_cache(maxsize=_FIXED_MEMO_SIZE)
def _fixed_tokens(system_prompt: str, tools_json: str, model: str) -> int:
    tokens = count_message_tokens({"role": "system", "content": system_prompt}, model)
    if tools_json:
        tokens += count_tools_tokens(json.loads(tools_json), model)
    return tokens
