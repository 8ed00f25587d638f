"""The tokens of a prompt's fixed prefix (system prompt + tool schemas), counted once per distinct prefix.

Why its own module: the engine counts it at every assemble, and the summary preparation
(engine_prepare.py) and the window check (room.py) must count it the same way; the engine imports
both of those, so the count lives below all three.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from myrm_tui.context.tokens import count_message_tokens, count_tools_tokens

# Distinct prefixes seen: one per model and tool set in practice; the bound only stops a
# long-lived process that cycles through many from growing without end.
_FIXED_CACHE: dict[tuple[str, str, str], int] = {}
_FIXED_CACHE_MAX = 64


def tools_key(tools: Sequence[dict[str, Any]]) -> str:
    return json.dumps(list(tools), sort_keys=True)


def fixed_tokens(system_prompt: str, tools_key: str | tuple, model: str) -> int:
    """System prompt + tool schemas, counted once per distinct prefix."""
    key = (system_prompt, tools_key if isinstance(tools_key, str) else "", model)
    if key not in _FIXED_CACHE:
        tokens = count_message_tokens({"role": "system", "content": system_prompt}, model)
        if key[1]:
            tokens += count_tools_tokens(json.loads(key[1]), model)
        if len(_FIXED_CACHE) > _FIXED_CACHE_MAX:
            _FIXED_CACHE.clear()
        _FIXED_CACHE[key] = tokens
    return _FIXED_CACHE[key]
