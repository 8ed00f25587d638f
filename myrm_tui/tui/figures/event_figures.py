"""Figures read from a session's stored events: the ring's reading, spend, compactions, cache.

The ring, the compaction panel and the health screen all read these functions, so a figure
shown in two places can never disagree. The engine's records are read through their typed
`from_dict` (`context/assemble_report.py`, `context/compaction/event.py`), which is lenient: the
report grows over time and older sessions hold smaller ones, so a missing value is None and the
widget hides that row rather than showing a made-up zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from myrm_tui.context.assemble_report import AssembleReport
from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.rows.json_fields import float_or_none, int_or_none
from myrm_tui.context.stages.cache_optimize import CacheBreak as EngineCacheBreak
from myrm_tui.store import event_kinds
from myrm_tui.store.records import EventRecord
from myrm_tui.tui.constants import RING_CRIT_RATIO, RING_WARN_RATIO
from myrm_tui.tui.formatting import token_change

# ----------------------------------------------------------------------------- the ring


@dataclass(frozen=True)
class ContextReading:
    """How full the prompt of the last request was (not a running total)."""

    used: int | None = None
    limit: int | None = None  # the prompt limit: window − output reserve − safety margin
    window: int | None = None
    output_reserve: int | None = None
    safety_margin: int | None = None
    fixed_tokens: int | None = None  # system prompt + tool schemas
    history_tokens: int | None = None
    tier: str | None = None  # the engine's ladder tier for that request
    deferred: str | None = None
    source: str = "none"  # assemble, usage, compaction, live, parent, estimate (a fresh fork), none

    @property
    def ratio(self) -> float | None:
        if self.used is None or not self.limit:
            return None
        return self.used / self.limit

    @property
    def percent(self) -> int | None:
        ratio = self.ratio
        return None if ratio is None else round(ratio * 100)

    @property
    def level(self) -> str:
        """ok / warn / crit, or unknown before the first request. Judged on the percentage the
        ring shows, so "75%" is never green and "90%" never amber (2,999 of 4,000 rounds to 75)."""
        percent = self.percent
        return level_for(None if percent is None else percent / 100)


def level_for(ratio: float | None) -> str:
    if ratio is None:
        return "unknown"
    if ratio >= RING_CRIT_RATIO:
        return "crit"
    if ratio >= RING_WARN_RATIO:
        return "warn"
    return "ok"


def reading_from_report(data: Mapping[str, Any]) -> ContextReading:
    """One stored `assemble` report → reading (`AssembleReport.from_dict` reads the engine's
    full report and the early pass-through one alike)."""
    report = AssembleReport.from_dict(data)
    budget = report.budget
    return ContextReading(
        used=report.tokens,
        limit=budget.prompt_limit,
        window=budget.window,
        output_reserve=budget.output_reserve,
        safety_margin=budget.safety_margin,
        fixed_tokens=budget.fixed_tokens,
        history_tokens=budget.history_tokens,
        tier=report.ladder.tier,
        deferred=report.ladder.deferred,
        source="assemble",
    )


def context_reading(events: Sequence[EventRecord]) -> ContextReading:
    """The latest request's reading: the newest assemble report, corrected by what came after
    it — the provider's own prompt count for that call (usage), or a compaction's result."""
    latest: EventRecord | None = None
    for event in events:
        if event.kind == event_kinds.ASSEMBLE and (latest is None or event.id > latest.id):
            latest = event
    if latest is None:
        return ContextReading()
    reading = reading_from_report(latest.data)
    after = sorted((e for e in events if e.id > latest.id), key=lambda e: e.id)
    for event in after:
        if event.kind == event_kinds.USAGE:
            prompt = int_or_none(event.data.get("prompt_tokens"))
            if prompt:
                reading = replace(reading, used=prompt, source="usage")
        elif event.kind == event_kinds.COMPACTION:
            compaction = CompactionEvent.from_dict(event.data)
            if compaction.is_done and compaction.tokens_after is not None:
                reading = replace(reading, used=compaction.tokens_after, history_tokens=None, source="compaction")
    return reading


# ----------------------------------------------------------------------------- spend


@dataclass(frozen=True)
class Spend:
    """Session totals over every model call (cumulative, unlike the ring)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    cost: float | None = None  # None: no call reported a cost

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cache_hit_rate(self) -> float | None:
        """Share of prompt tokens served from the provider cache."""
        return self.cached_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    def add(self, data: Mapping[str, Any]) -> Spend:
        cost = float_or_none(data.get("cost"))
        return Spend(
            calls=self.calls + 1,
            prompt_tokens=self.prompt_tokens + (int_or_none(data.get("prompt_tokens")) or 0),
            completion_tokens=self.completion_tokens + (int_or_none(data.get("completion_tokens")) or 0),
            cached_read_tokens=self.cached_read_tokens + (int_or_none(data.get("cached_read_tokens")) or 0),
            cached_write_tokens=self.cached_write_tokens + (int_or_none(data.get("cached_write_tokens")) or 0),
            cost=self.cost if cost is None else (self.cost or 0.0) + cost,
        )


def session_spend(events: Iterable[EventRecord], spend: Spend | None = None) -> Spend:
    """Spend over `events`, added to `spend` (a running total) when given."""
    spend = Spend() if spend is None else spend
    for event in events:
        if event.kind == event_kinds.USAGE:
            spend = spend.add(event.data)
    return spend


# ----------------------------------------------------------------------------- compaction


@dataclass(frozen=True)
class Compaction:
    key: str  # the engine's event id, else the store event id
    tier: str
    trigger: str
    tokens_before: int | None
    tokens_after: int | None
    saved: int | None
    items: int | None
    ms: float | None
    created_at: float

    @property
    def summary(self) -> str:
        """The transcript divider's words."""
        if self.items is None:
            parts = ["compacted"]
        else:
            parts = [f"compacted {self.items} message{'' if self.items == 1 else 's'}"]
        if self.saved is not None:
            parts.append(token_change(self.saved))
        return ", ".join(parts)


def _compaction(event: CompactionEvent, key: str, created_at: float) -> Compaction:
    return Compaction(
        key=str(event.id or key),
        tier=event.tier,
        trigger=event.trigger,
        tokens_before=event.tokens_before,
        tokens_after=event.tokens_after,
        saved=event.saved,
        items=event.items,
        ms=event.ms,
        created_at=created_at,
    )


def compactions(events: Iterable[EventRecord]) -> list[Compaction]:
    """Finished compactions, oldest first: `compaction` events and reports' `event` entries,
    deduplicated by the engine's id (the engine may record one compaction both ways)."""
    found: dict[str, Compaction] = {}
    for event in sorted(events, key=lambda e: e.id):
        if event.kind == event_kinds.COMPACTION:
            compaction = CompactionEvent.from_dict(event.data)
            if not compaction.is_done:
                continue
        elif event.kind == event_kinds.ASSEMBLE and isinstance(event.data.get("event"), Mapping):
            compaction = CompactionEvent.from_dict(event.data["event"])
        else:
            continue
        item = _compaction(compaction, f"event:{event.id}", event.created_at)
        found.setdefault(item.key, item)
    return list(found.values())


# ----------------------------------------------------------------------------- cache


@dataclass(frozen=True)
class CacheCall:
    prompt_tokens: int
    cached_read_tokens: int
    cached_write_tokens: int

    @property
    def hit_rate(self) -> float | None:
        return self.cached_read_tokens / self.prompt_tokens if self.prompt_tokens else None


@dataclass(frozen=True)
class CacheBreak:
    position: int | None
    previous_len: int | None
    reason: str
    created_at: float


def cache_calls(events: Iterable[EventRecord]) -> list[CacheCall]:
    return [
        CacheCall(
            int_or_none(e.data.get("prompt_tokens")) or 0,
            int_or_none(e.data.get("cached_read_tokens")) or 0,
            int_or_none(e.data.get("cached_write_tokens")) or 0,
        )
        for e in events
        if e.kind == event_kinds.USAGE
    ]


def cache_breaks(events: Iterable[EventRecord]) -> list[CacheBreak]:
    out = []
    for event in events:
        if event.kind != event_kinds.ASSEMBLE:
            continue
        found = event.data.get("cache_break")
        if isinstance(found, Mapping):
            typed = EngineCacheBreak.from_dict(found)
            out.append(CacheBreak(typed.position, typed.previous_len, typed.reason, event.created_at))
    return out


def latest_breakers(events: Sequence[EventRecord]) -> dict[str, str] | None:
    """Stage → state from the newest report that has a `breakers` entry (None: never reported)."""
    for event in reversed(events):
        if event.kind == event_kinds.ASSEMBLE:
            breakers = AssembleReport.from_dict(event.data).breakers
            if breakers is not None:
                return breakers
    return None
