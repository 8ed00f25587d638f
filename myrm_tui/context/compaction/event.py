"""The record of one compaction event: returned by the compactor, shown in the assemble report,
stored as the data of the `compaction` event.

Why typed: the TUI and the bench read these figures back from the store; one `to_dict` writes
the stored JSON (its shape is what replays digest, so it must not change) and one `from_dict`
reads it back, leniently, for sessions written by older versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from myrm_tui.context.rows.json_fields import float_or_none, int_or_none, mapping_or_empty, str_or_none

STARTED = "started"  # written before the plan runs: a crash mid-event leaves this, never a half "done"
DONE = "done"


@dataclass(frozen=True)
class SummaryFigures:
    """The summary nodes an event created: per depth, how many are extractive, how many brief."""

    created_by_depth: dict[str, int] = field(default_factory=dict)
    fallback: int = 0
    brief: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"created_by_depth": dict(self.created_by_depth), "fallback": self.fallback, "brief": self.brief}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SummaryFigures:
        created = mapping_or_empty(data.get("created_by_depth"))
        return cls(
            {str(k): int_or_none(v) or 0 for k, v in created.items()},
            int_or_none(data.get("fallback")) or 0,
            int_or_none(data.get("brief")) or 0,
        )


@dataclass(frozen=True)
class CompactionEvent:
    id: int | None
    tier: str
    trigger: str
    tokens_before: int | None
    summaries: SummaryFigures
    tokens_after: int | None
    saved: int | None
    items: int | None
    ops: dict[str, int]
    tail_start_id: int | None
    first_changed_id: int | None
    ms: float | None
    state: str | None = None  # only on the stored event (STARTED / DONE); the engine's own record has none

    def done(self) -> CompactionEvent:
        """The record as the `compaction` event stores it once the event is complete."""
        return replace(self, state=DONE)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "tier": self.tier,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "summaries": self.summaries.to_dict(),
            "tokens_after": self.tokens_after,
            "saved": self.saved,
            "items": self.items,
            "ops": dict(self.ops),
            "tail_start_id": self.tail_start_id,
            "first_changed_id": self.first_changed_id,
            "ms": self.ms,
        }
        if self.state is not None:
            out["state"] = self.state
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompactionEvent:
        """Lenient: a missing figure is None (`saved` is derived from before/after when absent),
        a missing tier or trigger is "?"."""
        before, after = int_or_none(data.get("tokens_before")), int_or_none(data.get("tokens_after"))
        saved = int_or_none(data.get("saved"))
        if saved is None and before is not None and after is not None:
            saved = before - after
        return cls(
            id=int_or_none(data.get("id")),
            tier=str(data.get("tier") or "?"),
            trigger=str(data.get("trigger") or "?"),
            tokens_before=before,
            summaries=SummaryFigures.from_dict(mapping_or_empty(data.get("summaries"))),
            tokens_after=after,
            saved=saved,
            items=int_or_none(data.get("items")),
            ops={str(k): int_or_none(v) or 0 for k, v in mapping_or_empty(data.get("ops")).items()},
            tail_start_id=int_or_none(data.get("tail_start_id")),
            first_changed_id=int_or_none(data.get("first_changed_id")),
            ms=float_or_none(data.get("ms")),
            state=str_or_none(data.get("state")),
        )

    @property
    def is_done(self) -> bool:
        """Finished (a record without a state is the engine's own, which only exists once done)."""
        return self.state is None or self.state == DONE


def started_record(tier: str, trigger: str, tokens_before: int) -> dict[str, Any]:
    """The `compaction` event written before the plan runs (its JSON shape, as stored)."""
    return {"tier": tier, "trigger": trigger, "tokens_before": tokens_before, "state": STARTED}
