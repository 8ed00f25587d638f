"""Compression intent: what the current task is about, so compaction spares it.

Built from the latest user message and the in-flight tool calls (the current turn), never from
older history, so it reflects the task the model is working on right now.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.views import parse_arguments
from myrm_tui.messages import content_text
from myrm_tui.store.records import MessageRecord

# Path-looking tokens: a slash or a dotted extension of 1–8 letters (src/app.py, README.md).
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}|(?:[\w.-]+/)+[\w.-]+)(?![\w/])")
# At most this many focus paths: more and "protected" stops meaning anything.
MAX_FOCUS = 12


@dataclass(frozen=True)
class Intent:
    focus_paths: frozenset[str] = field(default_factory=frozenset)
    failed_call_ids: frozenset[str] = field(default_factory=frozenset)
    pinned_paths: frozenset[str] = field(default_factory=frozenset)

    def protects(self, text: str, call_id: str = "") -> bool:
        if call_id and call_id in self.failed_call_ids:
            return True
        return any(path in text for path in self.focus_paths | self.pinned_paths)


def _text_of(message: Mapping[str, Any]) -> str:
    """A message's text as compaction has always read it: parts joined by " ", an image an empty
    piece. Dedup hashes, filters and the summaries are built from this text, so its bytes are
    part of the prompt: keep the options, not the defaults of `content_text`."""
    return content_text(message.get("content"), sep=" ", image="", keep_empty=True)


def looks_failed(content: str) -> bool:
    head = content[:300].lower()
    return head.startswith(("error", "[error", "refused", "timeout")) or "traceback (most recent call last)" in head


def build_intent(rows: Sequence[MessageRecord], last_user_index: int | None, pinned: Sequence[str] = ()) -> Intent:
    if last_user_index is None:
        return Intent(pinned_paths=frozenset(pinned))
    paths: list[str] = []
    failed: set[str] = set()
    paths.extend(m.group(1) for m in _PATH.finditer(_text_of(rows[last_user_index].message)))
    for row in rows[last_user_index + 1 :]:
        message = row.message
        for call in message.get("tool_calls") or ():
            args = parse_arguments(call.get("function", {}).get("arguments"))
            for key in ("path", "pattern"):
                if isinstance(args.get(key), str):
                    paths.append(args[key])
        if message.get("role") == "tool" and looks_failed(_text_of(message)):
            failed.add(message.get("tool_call_id", ""))
    unique = list(dict.fromkeys(p for p in paths if len(p) >= 3))[:MAX_FOCUS]
    return Intent(frozenset(unique), frozenset(failed), frozenset(pinned))
