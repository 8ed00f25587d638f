"""Reads what the ring and the compaction panel show from the store (the TUI's only adapter
onto engine records; the figures themselves come from `metrics`).

Queries are bounded: only the newest assemble report and compactions are needed for the ring,
plus the usage rows for the session's spend, so a 500-turn session does not decode thousands
of reports on every model call. The chat refreshes the ring on every step and usage event, so
it keeps a `ContextFollower`: the first read is the bounded one above, later reads ask only for
the events stored since (a cost per refresh that does not grow with the session).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from myrm_tui.store import event_kinds
from myrm_tui.store.records import EventRecord
from myrm_tui.tui.figures.metrics import ContextReading, Spend, context_reading, session_spend

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

# Newest compaction events read for the ring: one is enough to correct the reading, a few guard
# against "started" markers interleaved with "done" ones.
_RECENT_COMPACTIONS = 4
# The kinds the ring's figures come from, each followed by its own newest id.
_FOLLOWED = (event_kinds.ASSEMBLE, event_kinds.COMPACTION, event_kinds.USAGE)
# Usage and compaction events kept after the newest assemble report. Normally one or two (one
# model call's); the cap bounds an engine that stores no reports, where only the newest counts.
_KEPT_CORRECTIONS = 64


@dataclass(frozen=True)
class Thresholds:
    """The engine's auto-compaction ladder as shares of the prompt limit (None: unknown)."""

    light: float | None = None
    full: float | None = None
    emergency: float | None = None


@dataclass(frozen=True)
class ContextState:
    reading: ContextReading = field(default_factory=ContextReading)
    spend: Spend = field(default_factory=Spend)
    thresholds: Thresholds = field(default_factory=Thresholds)
    session_id: str | None = None


def engine_thresholds() -> Thresholds:
    """The ladder of the context engine's default config, if the engine is installed."""
    try:
        from myrm_tui.context.window.config import DEFAULT_CONFIG
    except ImportError:  # an engine without the ladder: the tooltip hides the row
        return Thresholds()
    config: Any = DEFAULT_CONFIG
    return Thresholds(
        getattr(config, "light_ratio", None),
        getattr(config, "full_ratio", None),
        getattr(config, "emergency_ratio", None),
    )


def recent_context_events(store: Store, session_id: str) -> list[EventRecord]:
    events = [
        *store.events(session_id, event_kinds.ASSEMBLE, limit=1),
        *store.events(session_id, event_kinds.COMPACTION, limit=_RECENT_COMPACTIONS),
        *store.events(session_id, event_kinds.USAGE),
    ]
    return sorted(events, key=lambda e: e.id)


def read_context(store: Store, session_id: str | None) -> ContextState:
    """The one reading of how full the context is: the ring, the status bar and the health
    screen all show this (the compaction panel reads the same events and summary nodes).

    A fork that has not made a request yet has no reading of its own. A full-history fork's
    prompt is its parent's history, so it shows the parent's last reading (source "parent"); a
    fork with summary starts far smaller, so it shows the parent's fixed prefix plus its own
    stored messages (source "estimate") rather than a figure that was never true of it. Spend
    always starts from zero."""
    return ContextFollower().read(store, session_id)


class ContextFollower:
    """`read_context` for a reader that asks again and again (the ring, on every model call):
    remembers, per event kind, the newest id it has read, the running spend and what the
    reading rests on, and on the next read asks the store only for newer events of each kind
    (index seeks on (session, kind, id), so the cost does not grow with the session).

    The reading is recomputed each time from what it rests on: the newest assemble report and
    the usage and compaction events after it (`context_reading`, the same function a fresh read
    uses). Keeping those events rather than a folded reading makes the per-kind reads safe
    against the agent thread writing between them: an event that shows up one read late is
    still put in id order."""

    def __init__(self) -> None:
        self._store: Store | None = None
        self._session_id: str | None = None
        self._last_ids: dict[str, int] = {}
        self._assemble: EventRecord | None = None
        self._corrections: list[EventRecord] = []  # usage and compactions after `_assemble`
        self._spend = Spend()
        self._thresholds: Thresholds | None = None

    def read(self, store: Store, session_id: str | None) -> ContextState:
        if self._thresholds is None:
            self._thresholds = engine_thresholds()
        if session_id is None:
            self._store = self._session_id = None
            return ContextState(thresholds=self._thresholds)
        if store is not self._store or session_id != self._session_id:
            self._store, self._session_id = store, session_id
            self._take(recent_context_events(store, session_id), Spend(), fresh=True)
        else:
            fresh = [e for kind in _FOLLOWED for e in store.events(session_id, kind, after_id=self._last_ids[kind])]
            self._take(fresh, self._spend, fresh=False)
        events = [self._assemble, *self._corrections] if self._assemble is not None else []
        reading = context_reading(events)
        if reading.used is None:
            reading = _fresh_fork_reading(store, session_id)
        return ContextState(reading, self._spend, self._thresholds, session_id)

    def _take(self, events: list[EventRecord], spend: Spend, fresh: bool) -> None:
        if fresh:
            self._last_ids = dict.fromkeys(_FOLLOWED, 0)
            self._assemble, self._corrections = None, []
        for event in events:
            self._last_ids[event.kind] = max(self._last_ids[event.kind], event.id)
            if event.kind == event_kinds.ASSEMBLE and (self._assemble is None or event.id > self._assemble.id):
                self._assemble = event
        self._spend = session_spend(events, spend)
        after = self._assemble.id if self._assemble is not None else 0
        kept = [e for e in (*self._corrections, *events) if e.kind != event_kinds.ASSEMBLE and e.id > after]
        self._corrections = sorted(kept, key=lambda e: e.id)[-_KEPT_CORRECTIONS:]


def _fresh_fork_reading(store: Store, session_id: str) -> ContextReading:
    parent = store.get_session(session_id).parent_id
    if not parent:
        return ContextReading()
    reading = context_reading(recent_context_events(store, parent))
    if reading.used is None:
        return ContextReading()
    forks = store.events(session_id, event_kinds.FORK, limit=1)
    if not (forks and forks[-1].data.get("with_summary")):
        return replace(reading, source="parent")
    if reading.fixed_tokens is None:
        return ContextReading(limit=reading.limit, window=reading.window)
    history = sum(r.tokens for r in store.messages(session_id))
    return replace(
        reading,
        used=reading.fixed_tokens + history,
        history_tokens=history,
        tier=None,
        deferred=None,
        source="estimate",
    )


@dataclass(frozen=True)
class ModelBudget:
    """The prompt budget the engine gives the session's current model (context/window/budget.py)."""

    model: str
    window: int
    limit: int  # the prompt limit: window − output reserve − safety margin
    output_reserve: int
    safety_margin: int
    # The registry says the model caches prompts: without a cache, per-call cache rows (all "0
    # read") and cache-break warnings describe nothing and are not shown.
    prompt_cache: bool = True
    # The model takes tool calls: it gets the tool schemas and the full system prompt (a
    # chat-only model a one-line prompt and none).
    tools: bool = True


def model_budget(model: str, settings: Any) -> ModelBudget | None:
    """The budget `model` gets under `settings` (its window from the registry, the output it is
    asked for: agent.window_check.max_output_for), or None when it cannot be known here. May
    import litellm (the registry): call it off the UI thread, or once the warm-up loaded it."""
    try:
        from myrm_tui.agent.setup.window_check import max_output_for
        from myrm_tui.context.window.budget import budget_for
        from myrm_tui.llm.models import registry
        from myrm_tui.llm.models.capability_class import effective_model

        # The window the engine plans with (the `window_cap` setting), not the advertised one.
        info = effective_model(registry.info(model, settings.models), str(settings.window_cap), settings.models)
        budget = budget_for(info.context_window, max_output_for(settings, info))
    except Exception:  # noqa: BLE001 - the figures then stay those of the last request
        return None
    return ModelBudget(
        model,
        budget.window,
        budget.prompt_limit,
        budget.output_reserve,
        budget.safety_margin,
        prompt_cache=info.supports_prompt_caching,
        tools=info.supports_tools,
    )


def with_budget(reading: ContextReading, budget: ModelBudget | None) -> ContextReading:
    """The last request's reading measured against the current model's budget.

    Why: the stored reading carries the window of the model that made the last request. After
    /model (or in a fork on another model) the ring and the health screen showed that old window
    until the next request (a 1M window while a 8k model was active); the tokens of the last
    prompt are what they were, but the share of the window is the new model's."""
    if budget is None or (reading.window == budget.window and reading.limit == budget.limit):
        return reading
    return replace(
        reading,
        window=budget.window,
        limit=budget.limit,
        output_reserve=budget.output_reserve,
        safety_margin=budget.safety_margin,
    )


def expected_compaction(used: int | None, limit: int) -> int | None:
    """If a prompt of `used` tokens would trigger a compaction under a model whose prompt limit
    is `limit` (`model_budget`: its window, the output it is asked for, the window cap), about
    how many tokens it would remove; else None."""
    if not used:
        return None
    ladder = engine_thresholds()
    trigger = ladder.light if ladder.light else 1.0
    if used <= trigger * limit:
        return None
    try:
        from myrm_tui.context.window.config import DEFAULT_CONFIG

        target = float(DEFAULT_CONFIG.target_ratio)
    except (ImportError, AttributeError):
        target = trigger
    return max(0, used - int(target * limit))
