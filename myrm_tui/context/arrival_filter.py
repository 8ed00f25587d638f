"""Stage 3, the smart filter on arrival: oversized new rows get a real excerpt and a handle, once.

Why decided on arrival (not at compaction): an output over its allowance would otherwise sit in
the prompt whole until an event, and a view decided once comes back byte-identical every turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from myrm_tui.context.filters import filter_output
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.observations.argument_cuts import shrunk_call_arguments
from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import FILTERED, REMOVED, SHRUNK, View, filtered_header, msg_handle
from myrm_tui.context.view_log import ViewLog
from myrm_tui.context.window.arrival_budget import ArrivalAllowances, arrival_allowances, over_turn_allowance
from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.settings.sections.output_filters import FilterSpec
from myrm_tui.store.records import MessageRecord


def filter_arrivals(
    history: RenderedHistory,
    new_rows: Sequence[MessageRecord],
    budget: Budget,
    model: str,
    view_log: ViewLog,
    *,
    fixed: int = 0,
    file_read_exempt: bool | None = None,
    filters: Sequence[FilterSpec] = (),
) -> dict[int, View]:
    """Outputs over their allowance (`arrival_budget.py`: it shrinks as the room left shrinks),
    any single item over `max_item_ratio`, and the biggest outputs of a turn whose outputs add up
    to more than the turn allowance get a real excerpt + handle; the views are stored and their
    rows re-render. `fixed`: the system prompt and tool schemas, for the room left;
    `file_read_exempt`: the setting of this request (None: the engine config's); `filters`: the
    session's declarative output filters."""
    if not new_rows:
        return {}
    config = history.config
    if file_read_exempt is not None and file_read_exempt != config.file_read_exempt:  # this request's setting
        config = replace(config, file_read_exempt=file_read_exempt)
    decided: dict[int, View] = {}
    first_new = history.index_of_id(new_rows[0].id)
    allowances = arrival_allowances(budget.prompt_limit, fixed + _prompt_before(history, first_new), config)
    earlier = _turn_outputs_before(history, first_new)
    pending: list[tuple[MessageRecord, str, dict[str, Any]]] = []  # the turn's new outputs kept whole so far
    for row in new_rows:
        if row.role == "user":
            # Only the newest turn's outputs are capped together: rows of older turns arrive in
            # one batch only when a session is opened again, and were decided when they came.
            earlier, pending = 0, []
        name, args = _call_of(history, row)
        counted = row.role == "tool" and name != "file_read"
        view = history.views.get(row.id)
        if view is not None:
            earlier += _shown(view) if counted else 0
            continue
        if row.role == "tool":
            allowance = allowances.file_read if name == "file_read" else allowances.output
        else:
            allowance = allowances.item
        view = None
        if row.tokens > allowance:
            view = _excerpt(
                row, name, args, allowance, model, "over the per-item allowance", config.edit_keep_chars, filters
            )
        if view is not None:
            decided[row.id] = view
            earlier += view.tokens if counted else 0
        elif counted:
            pending.append((row, name, args))
    decided.update(_fit_turn(pending, earlier, allowances, model, filters))
    if decided:
        history.views.update(decided)
        view_log.save_views(history.session_id, 0, decided, None)
        # Rows synced (and rendered) by `maintain` before this filter saw them.
        history.invalidate_from(min(history.index_of_id(mid) for mid in decided))
    return decided


def _fit_turn(
    pending: Sequence[tuple[MessageRecord, str, dict[str, Any]]],
    earlier: int,
    allowances: ArrivalAllowances,
    model: str,
    filters: Sequence[FilterSpec] = (),
) -> dict[int, View]:
    """Excerpts for the biggest of one turn's new outputs while the turn is over its allowance."""
    if not pending:
        return {}
    by_id = {row.id: (row, name, args) for row, name, args in pending}
    views: dict[int, View] = {}

    def excerpt_of(mid: int) -> int | None:
        row, name, args = by_id[mid]
        view = _excerpt(
            row, name, args, allowances.aggregate_excerpt, model, "over the turn's output allowance", filters=filters
        )
        if view is None:
            return None
        views[mid] = view
        return view.tokens

    chosen = over_turn_allowance(
        earlier, [(row.id, row.tokens) for row, _, _ in pending], allowances.turn, allowances.floor, excerpt_of
    )
    return {mid: views[mid] for mid in chosen}


def _excerpt(
    row: MessageRecord,
    name: str,
    args: dict[str, Any],
    allowance: int,
    model: str,
    reason: str,
    edit_keep: int = 0,
    filters: Sequence[FilterSpec] = (),
) -> View | None:
    """The stored view of `row` cut to about `allowance` tokens (None when it cannot be cut);
    a file edit's text keeps `edit_keep` characters (context/observations/file_protection.py)."""
    if row.message.get("tool_calls"):
        shrunk = _shrunk_arguments(row, model, edit_keep)
        if shrunk is not None:
            return shrunk
    content = compaction_text(row.message)
    if not content:
        return None
    result = filter_output(content, tool=name, arguments=args, budget_chars=max(400, allowance * 3), filters=filters)
    if result is None:
        return None
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
    return View(
        FILTERED if row.role == "tool" else SHRUNK,
        message,
        count_message_tokens(message, model),
        reason,
        handle,
        0,
    )


def _call_of(history: RenderedHistory, row: MessageRecord) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments of a tool result (empty for other rows)."""
    if row.role != "tool":
        return "", {}
    return history.calls.get(row.message.get("tool_call_id", ""), (row.message.get("name", ""), {}))


def _shown(view: View) -> int:
    return 0 if view.kind == REMOVED else view.tokens


def _row_shown(history: RenderedHistory, index: int) -> int:
    """Tokens row `index` takes in the prompt by its decided view (before rendering)."""
    row = history.rows[index]
    view = history.views.get(row.id)
    return row.tokens if view is None else _shown(view)


def _prompt_before(history: RenderedHistory, first_new: int) -> int:
    """History tokens in the prompt before row `first_new`: the rendered entries (minus any of
    the new rows `maintain` rendered already) plus the older rows not rendered again yet (a new
    user message makes the previous turn render again)."""
    entries = history.entries
    tokens = history.tokens
    position = len(entries)
    while position and entries[position - 1].anchor >= first_new:
        position -= 1
        tokens -= entries[position].tokens
    rendered_end = entries[position - 1].anchor + 1 if position else 0
    return tokens + sum(_row_shown(history, i) for i in range(rendered_end, first_new))


def _turn_outputs_before(history: RenderedHistory, first_new: int) -> int:
    """Tokens the tool outputs (file reads excepted) of the turn `first_new` belongs to take in
    the prompt already, from the turn's user message up to the new rows."""
    total = 0
    for index in range(first_new - 1, -1, -1):
        row = history.rows[index]
        if row.role == "user":
            break
        if row.role == "tool" and _call_of(history, row)[0] != "file_read":
            total += _row_shown(history, index)
    return total


def _shrunk_arguments(row: MessageRecord, model: str, edit_keep: int = 0) -> View | None:
    """An assistant message over the per-item allowance because of its tool-call arguments
    (a 500 KB `file_write`): the arguments are cut on arrival, decided once like any
    oversized item. Left to compaction, it sat in the fresh tail, and the emergency removed
    every older turn before the in-tail pass cut it."""
    message = shrunk_call_arguments(row.message, msg_handle(row.id), edit_keep)
    if message is None:
        return None
    return View(
        SHRUNK, message, count_message_tokens(message, model), "long tool-call arguments cut", msg_handle(row.id), 0
    )
