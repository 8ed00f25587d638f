"""Long tool-call arguments cut down: a `file_write` body or an edit's text as the prompt shows it.

Why one module: compaction's full tier (context/stages/compress.py) and the arrival filter
(context/arrival_filter.py) cut the same arguments the same way, so a call reads alike whichever
cut it; the whole text stays in the store, one `ctx_expand` away.
"""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.context.observations.file_protection import EDIT_TOOLS
from myrm_tui.context.rows.views import parse_arguments

# Tool-call argument strings longer than this are cut in the full tier (file_write bodies).
MAX_ARG_CHARS = 2_000
ARG_KEEP_CHARS = 300


def shrunk_call_arguments(message: dict[str, Any], handle: str, edit_keep: int = 0) -> dict[str, Any] | None:
    """`message` with its long tool-call argument strings cut (`argument_cut`), for the calls
    whose arguments exceed MAX_ARG_CHARS; None when no argument is cut."""
    calls = message.get("tool_calls") or ()
    if not any(len(c.get("function", {}).get("arguments") or "") > MAX_ARG_CHARS for c in calls):
        return None
    new_calls, changed = [], False
    for call in calls:
        function = dict(call.get("function", {}))
        args = parse_arguments(function.get("arguments"))
        if len(function.get("arguments") or "") > MAX_ARG_CHARS and args:
            for key, value in list(args.items()):
                cut = argument_cut(str(function.get("name") or ""), value, handle, edit_keep)
                if cut is not None:
                    args[key], changed = cut, True
            function["arguments"] = json.dumps(args, ensure_ascii=False)
        new_calls.append({**call, "function": function})
    return {**message, "tool_calls": new_calls} if changed else None


def argument_cut(tool: str, value: object, handle: str, edit_keep: int) -> str | None:
    """An argument string as the prompt shows it once cut; None when it stays whole. Any tool's
    string above ARG_KEEP_CHARS keeps its head; a file edit's (`file_protection.EDIT_TOOLS`) keeps
    `edit_keep` characters (at least as many), head and tail around a stub saying how much of
    what is left out and where the whole text is (the model edits by those lines)."""
    if not isinstance(value, str):
        return None
    head_and_tail = tool in EDIT_TOOLS and edit_keep >= ARG_KEEP_CHARS
    keep = edit_keep if head_and_tail else ARG_KEEP_CHARS
    if len(value) <= keep:
        return None
    if not head_and_tail:
        return f'{value[:ARG_KEEP_CHARS]}…[{len(value) - ARG_KEEP_CHARS:,} chars omitted; ctx_expand("{handle}")]'
    return edit_cut(value, keep, handle)


def edit_cut(value: str, keep: int, handle: str) -> str:
    """`value` (an edit's text above `keep` characters) as its head and tail around a stub that
    says how many characters and lines were left out and where the whole text is."""
    head, tail = value[: keep // 2], value[len(value) - (keep - keep // 2) :]
    middle = value[len(head) : len(value) - len(tail)]
    lines = middle.count("\n")
    return (
        f"{head}…[{len(middle):,} of {len(value):,} chars ({lines:,} lines) omitted here; "
        f'the whole text: ctx_expand("{handle}")]…{tail}'
    )
