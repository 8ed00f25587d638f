"""Stage 3, the smart filter on arrival: oversized new rows get a real excerpt and a handle, once.

Why decided on arrival (not at compaction): an output over its allowance would otherwise sit in
the prompt whole until an event, and a view decided once comes back byte-identical every turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from myrm_tui.context.budget import Budget
from myrm_tui.context.filters import filter_output
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.intent import _text_of
from myrm_tui.context.stages.compress import shrunk_call_arguments
from myrm_tui.context.tokens import count_message_tokens
from myrm_tui.context.view_log import ViewLog
from myrm_tui.context.views import FILTERED, SHRUNK, View, filtered_header, msg_handle
from myrm_tui.store.records import MessageRecord


def filter_arrivals(
    history: RenderedHistory, new_rows: Sequence[MessageRecord], budget: Budget, model: str, view_log: ViewLog
) -> dict[int, View]:
    """Outputs over the per-tool allowance, and any single item over `max_item_ratio`, get a
    real excerpt + handle; the views are stored and their rows re-render."""
    config = history.config
    decided: dict[int, View] = {}
    limit = budget.prompt_limit
    calls = history.calls
    for row in new_rows:
        if row.id in history.views:
            continue
        allowance = int(limit * config.ingest_filter_ratio)
        if row.role == "tool":
            name, args = calls.get(row.message.get("tool_call_id", ""), (row.message.get("name", ""), {}))
            if name == "file_read":
                allowance = int(limit * config.file_read_filter_ratio)
        else:
            name, args = "", {}
            allowance = int(limit * config.max_item_ratio)
        if row.tokens <= allowance:
            continue
        if row.message.get("tool_calls"):
            shrunk = _shrunk_arguments(row, model)
            if shrunk is not None:
                decided[row.id] = shrunk
                continue
        content = _text_of(row.message)
        if not content:
            continue
        result = filter_output(content, tool=name, arguments=args, budget_chars=max(400, allowance * 3))
        if result is None:
            continue
        handle = msg_handle(row.id)
        shown = count_message_tokens({"role": "user", "content": result.text}, model)
        noun = "output" if row.role == "tool" else f"{row.role} message"
        text = f"{filtered_header(row.tokens, shown, handle, result.kind, noun)}\n{result.text}"
        new_content: Any = text
        if isinstance(row.message.get("content"), list):
            # Keep the non-text parts (images) of a long multimodal message.
            new_content = [
                {"type": "text", "text": text},
                *[p for p in row.message["content"] if isinstance(p, dict) and p.get("type") != "text"],
            ]
        message = {**row.message, "content": new_content}
        decided[row.id] = View(
            FILTERED if row.role == "tool" else SHRUNK,
            message,
            count_message_tokens(message, model),
            "over the per-item allowance",
            handle,
            0,
        )
    if decided:
        history.views.update(decided)
        view_log.save_views(history.session_id, 0, decided, None)
        # Rows synced (and rendered) by `maintain` before this filter saw them.
        history.invalidate_from(min(history.index_of_id(mid) for mid in decided))
    return decided


def _shrunk_arguments(row: MessageRecord, model: str) -> View | None:
    """An assistant message over the per-item allowance because of its tool-call arguments
    (a 500 KB `file_write`): the arguments are cut on arrival, decided once like any
    oversized item. Left to compaction, it sat in the fresh tail, and the emergency removed
    every older turn before the in-tail pass cut it."""
    message = shrunk_call_arguments(row.message, msg_handle(row.id))
    if message is None:
        return None
    return View(
        SHRUNK, message, count_message_tokens(message, model), "long tool-call arguments cut", msg_handle(row.id), 0
    )
