"""The engine's compactions as ACP session updates, so an editor shows when the context was
summarized and what it saved.

Why a tool call: ACP has no compaction message, and an agent message chunk would land inside the
answer's text; a finished tool call of kind `think` is a block of its own that editors show
collapsed, with the figures as its title. Why read from the store: compactions are stored facts
the turn's events do not carry (the same reading `myrm run --output-format stream-json` does):
the log is read before each model call and at the end of a turn, so each one is sent once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp import start_tool_call, text_block, tool_content
from acp.schema import ToolCallStart

from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.sinks import RUN_ECHO, scrub
from myrm_tui.store.event_kinds import COMPACTION

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

CALL_ID_PREFIX = "myrm-compaction-"  # never a model's call id (providers' ids have their own shapes)


def _figures(event: CompactionEvent) -> str:
    before = f"{event.tokens_before:,}" if event.tokens_before is not None else "?"
    after = f"{event.tokens_after:,}" if event.tokens_after is not None else "?"
    return f"{before} → {after} tokens"


def compaction_update(event_id: int, event: CompactionEvent) -> ToolCallStart:
    saved = f", {event.saved:,} saved" if event.saved is not None else ""
    detail = (
        f"myrm compacted the context ({event.tier}, trigger: {event.trigger}): {_figures(event)}{saved}. "
        "What was summarized stays in the session and can be recalled (ctx_search, ctx_expand)."
    )
    return start_tool_call(
        f"{CALL_ID_PREFIX}{event_id}",
        scrub(RUN_ECHO, f"Context compacted: {_figures(event)}"),
        kind="think",
        status="completed",
        content=[tool_content(text_block(scrub(RUN_ECHO, detail)))],
    )


class CompactionFeed:
    """One session's compactions not yet sent; those stored before the session opened here are
    history (`session/load` replays messages, not context upkeep)."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        latest = store.events(session_id, COMPACTION, limit=1)
        self.last_id: int | None = latest[-1].id if latest else None

    def updates(self) -> list[ToolCallStart]:
        found: list[ToolCallStart] = []
        for record in self.store.events(self.session_id, COMPACTION, after_id=self.last_id):
            self.last_id = record.id
            event = CompactionEvent.from_dict(record.data)
            if event.is_done:  # a started record is followed by its done one; say it once
                found.append(compaction_update(record.id, event))
        return found
