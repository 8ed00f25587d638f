"""Read a session's stored turns for the transcript: items by turn, compaction dividers, reply figures.

Kept apart from the transcript widget, which only windows what it is given: reading the store (events
for the dividers, stored figures) is the chat session's business, not a widget's.
"""

from __future__ import annotations

from typing import Any

from textual.widget import Widget

from myrm_tui.agent.reply_figures import stored_figures
from myrm_tui.store import Store
from myrm_tui.tui.figures.metrics import compactions
from myrm_tui.tui.transcript.history import HistoryItem, UserItem, build_history, turn_after, turns_of, user_times
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.transcript import HistoryPage


def read_page(store: Store, session_id: str | None, records: list[Any], seen: set[str]) -> HistoryPage:
    """`records`' turns; the compactions found are added to `seen` (so they are not mounted twice)."""
    items = build_history(records).items
    return HistoryPage(
        turns_of(items),
        _dividers_by_turn(store, session_id, records, items, seen),
        stored_figures(store, session_id),  # a fork's shared replies: its parents'
    )


def _dividers_by_turn(
    store: Store, session_id: str | None, records: list[Any], items: list[HistoryItem], seen: set[str]
) -> dict[int, list[Widget]]:
    """Compaction dividers placed before the first turn that began after each compaction."""
    if session_id is None:
        return {}
    done = compactions(store.events(session_id))
    starts = user_times(records)
    lead = 1 if items and not isinstance(items[0], UserItem) else 0
    out: dict[int, list[Widget]] = {}
    for item in done:
        seen.add(item.key)
        out.setdefault(turn_after(starts, item.created_at) + lead, []).append(CompactionDivider(item.summary, item.key))
    return out
