"""The tokens of a prompt's fixed prefix (system prompt + tool schemas), counted once per distinct prefix.

Why its own module: the engine counts it at every assemble, and the summary preparation
(compaction/prepared_summaries.py) and the window check (room.py) must count it the same way; the engine imports
both of those, so the count lives below all three.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from myrm_tui.context.window.tokens import count_message_tokens, count_tools_tokens

# Distinct prefixes remembered: one per model and tool set in practice; the bound only stops a
# long-lived process that cycles through many from growing without end.
_FIXED_MEMO_SIZE = 64


# The last tool list keyed, a private copy, and its key: one tuple, swapped whole, so a thread
# never reads one list's key beside another's list. The agent hands a fresh deep copy of the
# same schemas every request, so identity never matches; comparing against the last list (`==`,
# in C) costs a fraction of serialising it again, which was a per-request cost.
_last_tools: tuple[list[dict[str, Any]], str] | None = None


def tools_key(tools: Sequence[dict[str, Any]]) -> str:
    """The tool schemas as canonical JSON (what `fixed_tokens` is memoised on). Reused when the
    list equals the last one: `==` calls JSON-different values equal only where Python does
    (`1 == 1.0 == True`), a swap no schema producer makes between two requests."""
    global _last_tools
    listed, last = list(tools), _last_tools
    if last is not None and listed == last[0]:
        return last[1]
    key = json.dumps(listed, sort_keys=True)
    _last_tools = (copy.deepcopy(listed), key)
    return key


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
