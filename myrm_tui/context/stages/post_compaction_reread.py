"""Stage 9, post-compaction reread: after a compaction, the newest content of the files the
agent modified most recently, so it does not edit from a stale memory of them. Modified by a file
tool (its `path` argument) or by a bash call in a git workspace (the files its git snapshot saw
change, stored on its result: store/changed_files.py).

Injected as a user-role context note (never into the system prompt, which stays cached), capped
in files and tokens. The reader is injected (the agent reads the workspace; replay has none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from myrm_tui.context.rows.views import UNTRUSTED_CLOSE, UNTRUSTED_OPEN, parse_arguments
from myrm_tui.sinks import SYNTHETIC_ROW, scrub
from myrm_tui.store.changed_files import changed_files
from myrm_tui.store.records import MessageRecord

WRITE_TOOLS = ("file_write", "file_edit")


def _row_paths(message: dict[str, Any]) -> list[str]:
    """The files one stored row says were changed, last first: the paths of its file-tool calls,
    or (a shell call's result) the files its git snapshot saw change."""
    paths = [
        parse_arguments(call.get("function", {}).get("arguments")).get("path")
        for call in message.get("tool_calls") or ()
        if call.get("function", {}).get("name") in WRITE_TOOLS
    ]
    paths += changed_files(message)
    return [p for p in reversed(paths) if isinstance(p, str)]


def modified_files(rows: Sequence[MessageRecord], limit: int) -> list[str]:
    """Paths written or edited, by a file tool or by a bash call, newest first."""
    seen: list[str] = []
    for row in reversed(rows):
        for path in _row_paths(row.message):
            if path not in seen:
                seen.append(path)
                if len(seen) >= limit:
                    return seen
    return seen


def build_reread(
    rows: Sequence[MessageRecord],
    reader: Callable[[str], str | None] | None,
    *,
    max_files: int,
    max_tokens: int,
    count: Callable[[dict[str, Any]], int],
) -> tuple[dict[str, Any], int] | None:
    if reader is None:
        return None
    parts: list[str] = []
    used = 0
    redacted = False
    for path in modified_files(rows, max_files):
        text = reader(path)
        if text is None:
            continue
        # Stored as a synthetic row and sent on every call until the next compaction: secrets
        # are redacted like in summaries (the header then says so; file_read shows the real lines).
        raw = f"--- {path} (current content) ---\n{text}"
        block = scrub(SYNTHETIC_ROW, raw)
        tokens = count({"role": "user", "content": block})
        if used + tokens > max_tokens:
            continue
        redacted = redacted or block != raw
        parts.append(block)
        used += tokens
    if not parts:
        return None
    body = "\n\n".join(parts)
    note = "; credentials show as [REDACTED:kind], file_read gives the real lines" if redacted else ""
    message = {
        "role": "user",
        "content": f"{UNTRUSTED_OPEN}\n[files you modified, re-read after compaction{note}]\n{body}\n{UNTRUSTED_CLOSE}",
    }
    return message, count(message)
