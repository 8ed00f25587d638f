"""Token counting with the tokenizer the provider family uses, computed once per message.

Why tiktoken for every model: exact for OpenAI, and within a few percent for the others, which
the budget's safety margin absorbs; provider-reported usage corrects the totals later. Encoders
load from litellm's bundled files (see `_offline_env`), so counting works offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from myrm_tui.messages import content_parts

if TYPE_CHECKING:  # tiktoken itself is imported on first use: loading it is slow
    from tiktoken import Encoding

# Chat formats wrap every message in a few control tokens (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 4
# An image costs the provider a fixed-ish amount whatever its bytes (OpenAI's 512px tile is
# 765 tokens at high detail); counting base64 characters would overstate it a hundredfold.
IMAGE_TOKENS = 765
# OpenAI's newer families use o200k; everything else is counted with cl100k.
O200K_MARKERS = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "codex")

# Short texts are counted once per tokenizer and remembered: placeholders, pointers, markers and
# summaries are counted again at every compaction event (and its dry run) while they stay the
# same. Long texts (tool outputs) are counted once at arrival anyway, and would only fill memory:
# the cap bounds the cache at COUNT_CACHE_SIZE × 2,000 characters (~16 MB worst case).
COUNT_CACHE_MAX_CHARS = 2_000
COUNT_CACHE_SIZE = 4_096
# Where a long text is cut for `count_text_tokens_by_line` so that its pieces' counts add up to
# the whole's: right after a newline that a character other than whitespace or "/" follows. Both
# tokenizers counted with (`encoding_name_for`) first cut text into chunks by a pattern, and no
# chunk runs from a newline into such a character (a punctuation run takes the newlines after
# it, and in o200k a "/" after them too), so each piece is chunked, and encoded, as in the whole.
# Checked against whole counts on fuzzed texts (tests/context/test_line_token_counts.py).
_LINE_CUT = re.compile(r"(?<=\n)(?=[^\s/])")
# The tokenizers that rule was checked for: any other is counted whole.
_LINE_EXACT_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
# Lines remembered by that count, apart from the short texts above (a tool output counted line
# by line would push the summaries' lines out): a summary area's lines, thousands per session.
LINE_COUNT_CACHE_SIZE = 8_192


@lru_cache(maxsize=64)  # a handful of model names per process; lowercasing each on every count added up
def encoding_name_for(model: str) -> str:
    name = model.lower().rsplit("/", 1)[-1]
    if any(name.startswith(marker) for marker in O200K_MARKERS):
        return "o200k_base"
    return "cl100k_base"


@lru_cache(maxsize=4)
def _encoder(encoding_name: str) -> Encoding:
    import tiktoken

    return tiktoken.get_encoding(encoding_name)


def load_encoder(model: str) -> None:
    """Load `model`'s tokenizer now (tiktoken's import and the encoding's file: 0.3-0.6 s), in the
    caller's thread: the chat's warm-up, so the first message does not load it on the UI loop."""
    _encoder(encoding_name_for(model))


def count_text_tokens(text: str, model: str = "") -> int:
    if not text:
        return 0
    encoding_name = encoding_name_for(model)
    if len(text) <= COUNT_CACHE_MAX_CHARS:
        return _count_short(encoding_name, text)
    return len(_encoder(encoding_name).encode(text, disallowed_special=()))


def _count(encoding_name: str, text: str) -> int:
    return len(_encoder(encoding_name).encode(text, disallowed_special=()))


# Keyed by the encoding, not the model: models that share a tokenizer share counts, and two
# tokenizers never see each other's.
_count_short = lru_cache(maxsize=COUNT_CACHE_SIZE)(_count)
_count_line = lru_cache(maxsize=LINE_COUNT_CACHE_SIZE)(_count)


def count_text_tokens_by_line(text: str, model: str = "") -> int:
    """`count_text_tokens(text, model)`, exactly, from the counts of its lines (`_LINE_CUT`),
    each remembered. Why: a summary node is counted as it is shrunk and again as stored, a fold's
    text is mostly its children's lines, and a long text counted whole costs ~1 ms per 5,000
    characters every time (most of the tokenizer's share of a compaction event, benchmark B1)."""
    if len(text) <= COUNT_CACHE_MAX_CHARS:
        return count_text_tokens(text, model)
    name = encoding_name_for(model)
    if name not in _LINE_EXACT_ENCODINGS:
        return count_text_tokens(text, model)
    return sum(
        _count_line(name, piece) if len(piece) <= COUNT_CACHE_MAX_CHARS else _count(name, piece)
        for piece in _LINE_CUT.split(text)
    )


def _unknown_part_text(part: Any) -> str:
    """An unknown content part (audio, a file) costs about what its JSON does: a name alone would
    count megabytes of base64 as a few tokens."""
    if isinstance(part, dict):
        return json.dumps(part, ensure_ascii=False, sort_keys=True)
    return str(part)


def count_message_tokens(
    message: Mapping[str, Any], model: str = "", count_text: Callable[[str, str], int] = count_text_tokens
) -> int:
    """Tokens one provider message costs in a prompt (content, tool calls, reasoning).
    `count_text`: how its texts are counted (the same figure either way)."""
    total = MESSAGE_OVERHEAD_TOKENS
    for kind, value in content_parts(message.get("content")):
        if kind == "image":
            total += IMAGE_TOKENS
        else:
            total += count_text(value if kind == "text" else _unknown_part_text(value), model)
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        total += count_text(str(function.get("name", "")), model)
        total += count_text(str(function.get("arguments", "")), model) + 3
    if message.get("reasoning_content"):
        total += count_text(str(message["reasoning_content"]), model)
    if message.get("tool_call_id"):
        total += 2
    return total


def count_tools_tokens(tools: Iterable[dict[str, Any]], model: str = "") -> int:
    return sum(count_text_tokens(json.dumps(t, sort_keys=True), model) + 2 for t in tools)
