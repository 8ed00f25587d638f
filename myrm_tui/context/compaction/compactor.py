"""Compaction events: which rows leave the prompt (or shrink), applied as one store transaction.

Why its own part: an event is the only thing that rewrites the cached history (everything else
appends), so it owns the fence (where the previous event's tail started), the per-tier savings
the ladder learns from, and the record the next report explains a cache break with. The summary
area decides what stands in for what it removes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.compaction.breaker import StageBreakers
from myrm_tui.context.compaction.dag import SUMMARY_BRIEF_KIND, SUMMARY_KIND
from myrm_tui.context.compaction.event import CompactionEvent, SummaryFigures, started_record
from myrm_tui.context.compaction.pointers import anchor_pointer
from myrm_tui.context.compaction.summary_area import SummaryArea
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.observations.intent import build_intent
from myrm_tui.context.observations.relevance_policy import eviction_order
from myrm_tui.context.pipeline import PRE_COMPACT
from myrm_tui.context.rows.units import Unit, split_units
from myrm_tui.context.rows.views import REMOVED, SHRUNK, View, msg_handle
from myrm_tui.context.stages.compress import EMERGENCY, PlanInput, plan_compaction
from myrm_tui.context.view_log import ViewLog
from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.compaction_interval import CompactionInterval
from myrm_tui.context.window.config import EngineConfig
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.context.window.turn_input import TurnInput
from myrm_tui.store.event_kinds import COMPACTION

PreCompactHook = Callable[[dict[str, Any]], None]


@dataclass
class EngineStats:
    assembles: int = 0
    events: int = 0
    tier_savings: dict[str, list[int]] = field(default_factory=dict)  # tier → tokens saved per event


class _TokenView:
    """Current prompt tokens per row index, read lazily (the planner only looks at live rows)."""

    def __init__(self, history: RenderedHistory):
        self._history = history

    def __getitem__(self, index: int) -> int:
        return self._history.row_tokens(index)

    def __len__(self) -> int:
        return len(self._history.rows)


class Compactor:
    def __init__(
        self,
        history: RenderedHistory,
        summaries: SummaryArea,
        view_log: ViewLog,
        breakers: StageBreakers,
        pre_compact: PreCompactHook | None,
    ):
        self.history = history
        self.summaries = summaries
        self.view_log = view_log
        self.breakers = breakers
        self.pre_compact = pre_compact
        self.config: EngineConfig = history.config
        self.stats = EngineStats()
        self.unreported: CompactionEvent | None = None  # the last event no report has shown yet
        self._fence_id: int | None = None
        self.interval = CompactionInterval()  # the ladder's economic trigger

    def event(
        self,
        tier: str,
        budget: Budget,
        inp: TurnInput,
        now: float,
        *,
        trigger: str,
        target_ratio: float | None = None,
        focus: Sequence[str] = (),
        no_tail: bool = False,
        floor: bool = False,
        overhead: int = 0,
        manual: bool = False,
        economic: bool = False,
    ) -> CompactionEvent | None:
        """One compaction event, written as one store transaction (event record, views,
        summary nodes): one fsync instead of a dozen, and a crash leaves all of it or none."""
        with self.history.store.batch():
            return self._event_in_batch(
                tier,
                budget,
                inp,
                now,
                trigger=trigger,
                target_ratio=target_ratio,
                focus=focus,
                no_tail=no_tail,
                floor=floor,
                overhead=overhead,
                manual=manual,
                economic=economic,
            )

    def _event_in_batch(
        self,
        tier: str,
        budget: Budget,
        inp: TurnInput,
        now: float,
        *,
        trigger: str,
        target_ratio: float | None = None,
        focus: Sequence[str] = (),
        no_tail: bool = False,
        floor: bool = False,
        overhead: int = 0,
        manual: bool = False,
        economic: bool = False,
    ) -> CompactionEvent | None:
        """`floor`: the last preflight pass (anchors may shrink to pointers); `overhead`: tokens
        the integrity repair adds to the prompt, kept free when sizing the summary area;
        `manual`: the compact command's smaller kept tail; `economic`: run by the economic
        trigger (its own floor, `economic_ratio`)."""
        history, store, session_id = self.history, self.history.store, self.history.session_id
        started = time.perf_counter()
        fixed = inp.fixed_tokens()
        before = fixed + history.tokens
        hook = self.pre_compact
        if hook is not None:
            self.breakers.run(PRE_COMPACT, lambda: hook({"tier": tier, "tokens": before}), None)
        event_record = store.append_event(session_id, COMPACTION, started_record(tier, trigger, before))
        plan_input = self.plan_input(
            tier,
            budget,
            inp,
            before,
            event_id=event_record.id,
            target_ratio=target_ratio,
            focus=focus,
            no_tail=no_tail,
            manual=manual,
            economic=economic,
        )
        tail_start, protected = plan_input.tail_start, plan_input.protected
        plan = plan_compaction(plan_input)
        if floor:
            self._point_anchors(plan, protected - {history.last_user}, inp.model.name, event_record.id)
        # The room left for synthetic messages (summaries, reread) once the plan is applied: the
        # summary area gets its share of B, but never more than fits (a tight window, a large
        # fixed prefix), else removal would only trade messages for summaries that do not fit.
        synthetic_now = sum(s.tokens for s in history.synthetic)
        room = budget.prompt_limit - (plan.total - synthetic_now) - overhead
        if not plan.views and synthetic_now <= room:
            self.stats.tier_savings.setdefault(tier, []).append(0)
            self.interval.reset(before)  # nothing to take: measure again from here
            return None
        history.views.update(plan.views)
        changed = sorted(history.index_of_id(mid) for mid in plan.views)
        synthetic = self.summaries.rebuild(event_record.id, inp.model.name, tail_start, budget, changed, room=room)
        if not changed and synthetic == history.synthetic:
            self.stats.tier_savings.setdefault(tier, []).append(0)
            self.interval.reset(before)
            return None
        self.view_log.save_views(session_id, event_record.id, plan.views, synthetic)
        # Only synthetic messages that appear or disappear move the prompt; kept ones are the
        # same objects, byte-identical.
        moved = [s for s in synthetic if s not in history.synthetic] + [
            s for s in history.synthetic if s not in synthetic
        ]
        history.synthetic = synthetic
        first = min([*changed[:1], *[history.index_of_id(s.before_id) for s in moved]])
        history.invalidate_from(first)
        history.render(history.render_key or inp.render_key())
        after = fixed + history.tokens
        self.stats.events += 1
        self.stats.tier_savings.setdefault(tier, []).append(before - after)
        self.interval.reset(after)
        rows = history.rows
        self._fence_id = rows[tail_start].id if tail_start < len(rows) else None
        created: dict[str, int] = {}
        fallbacks = 0
        for view in moved:
            if view.kind == SUMMARY_KIND and view in synthetic and view.handle:
                node = store.get_summary(session_id, view.handle)
                if node is not None:
                    created[str(node["depth"])] = created.get(str(node["depth"]), 0) + 1
                    fallbacks += int(node["fallback"])
        briefs = sum(1 for view in synthetic if view.kind == SUMMARY_BRIEF_KIND)  # shown in one line
        event = CompactionEvent(
            id=event_record.id,
            tier=tier,
            trigger=trigger,
            tokens_before=before,
            summaries=SummaryFigures(created, fallbacks, briefs),
            tokens_after=after,
            saved=before - after,
            items=len(plan.views),
            ops=plan.ops,
            tail_start_id=rows[tail_start].id if tail_start < len(rows) else None,
            first_changed_id=rows[first].id if first < len(rows) else None,
            ms=round((time.perf_counter() - started) * 1000, 3),
        )
        store.append_event(session_id, COMPACTION, event.done().to_dict())
        self.unreported = event
        return event

    def plan_input(
        self,
        tier: str,
        budget: Budget,
        inp: TurnInput,
        total: int,
        *,
        event_id: int,
        target_ratio: float | None = None,
        focus: Sequence[str] = (),
        no_tail: bool = False,
        manual: bool = False,
        economic: bool = False,
    ) -> PlanInput:
        """What the planner is given for one event (also for the dry run of `rows_removed_next`)."""
        history = self.history
        live = history.live_from()
        units = split_units(history.rows, live)
        # An economic event that model summaries stand for keeps a smaller fresh tail too.
        small_tail = economic and self.economic_ratio() < self.config.emergency_target_ratio
        if no_tail:
            tail_start = len(history.rows)
        elif manual:
            tail_start = self.manual_tail_start(units, budget.window)
        else:
            ratio = self.config.economic_tail_ratio if small_tail else self.config.tail_ratio
            tail_start = self.tail_start(units, budget.window, ratio)
        protected = frozenset(history.never_removed())  # anchors, prefix turns, security pins
        removal_ratio = self.config.removal_target_ratio
        if economic and target_ratio is None:
            target_ratio = removal_ratio = self.economic_ratio()
        if target_ratio is None:  # the last resort inside the fresh tail cuts as little as it can
            deep = tier == EMERGENCY and not no_tail
            target_ratio = self.config.emergency_target_ratio if deep else self.config.target_ratio
        return PlanInput(
            rows=history.rows,
            units=units,
            views=history.views,
            row_tokens=_TokenView(history),
            total=total,
            target=int(budget.prompt_limit * target_ratio),
            tier=tier,
            protected=protected,
            tail_start=tail_start,
            last_user=history.last_user if history.last_user is not None else -1,
            intent=build_intent(history.rows, history.last_user, pinned=focus),
            budget=budget.prompt_limit,
            light_filter_tokens=max(200, int(budget.prompt_limit * self.config.light_filter_ratio)),
            count=lambda m: count_message_tokens(m, inp.model.name),
            calls=history.calls,
            start=live,
            fence=self._fence_index(),
            removal_target=int(budget.prompt_limit * removal_ratio),
            event_id=event_id,
            blocks=self.summaries.prepared_blocks(),
            removal_end=units[-1].start if no_tail and units else None,
            eviction=eviction_order(inp.eviction_order, inp.model),
            protected_tools=inp.protected_tools,
            focus_band=self.config.removal_focus_band if inp.removal_focus_band is None else inp.removal_focus_band,
            eviction_min_age=_or(inp.eviction_min_age, self.config.eviction_min_age),
            observation_keep=_or(inp.observation_keep_window, self.config.observation_keep_window),
            file_protect_tokens=int(budget.prompt_limit * self.config.file_protect_ratio),
            edit_keep_chars=self.config.edit_keep_chars,
            facts=history.facts,
            output_filters=inp.output_filters,
        )

    def economic_ratio(self) -> float:
        """What an economic event removes down to: `economic_target_ratio` once model summaries
        stand for what it removes (`SummaryDag.model_written`), else the emergency's target."""
        ratio = self.config.emergency_target_ratio
        if self.config.economic_target_ratio < ratio and self.summaries.dag.model_written():
            return self.config.economic_target_ratio
        return ratio

    def event_target(self, budget: Budget) -> int:
        """What a removal event brings the prompt down to (the economic trigger's lowest floor).
        The model-summary floor only counts while the economic trigger can fire (a slow chat):
        anything else stays measured from the emergency's target, without a store read."""
        if self.config.economic_trigger and self.interval.slow():
            return int(budget.prompt_limit * self.economic_ratio())
        return int(budget.prompt_limit * self.config.emergency_target_ratio)

    def economic_progress(self, budget: Budget) -> float:
        """How far the economic trigger is from due (1.0 = due; 0 when the trigger is off, or
        while the session grows too fast for it: `CompactionInterval.slow`)."""
        if not self.config.economic_trigger or not self.interval.slow():
            return 0.0
        return self.interval.progress(self.event_target(budget), self.config.write_read_price_ratio)

    def economic_due_next(self, budget: Budget, tokens: int) -> bool:
        """Whether the next request (at least `tokens`) makes the economic trigger due (False
        while the trigger is off or the session grows too fast for it)."""
        if not self.config.economic_trigger or not self.interval.slow():
            return False
        target, ratio = self.event_target(budget), self.config.write_read_price_ratio
        return self.interval.progress_after(tokens, target, ratio) >= 1.0

    def tail_start(self, units: Sequence[Unit], window: int, ratio: float | None = None) -> int:
        """First row of the fresh tail: the newest units within `ratio` (default `tail_ratio`)
        of the window (at least the newest unit)."""
        allowance = int(window * (self.config.tail_ratio if ratio is None else ratio))
        used = 0
        start = units[-1].start if units else len(self.history.rows)
        for unit in reversed(units):
            tokens = sum(self.history.row_tokens(i) for i in range(unit.start, unit.end))
            if used + tokens > allowance and start != unit.start:
                break
            used += tokens
            start = unit.start
        return start

    def manual_tail_start(self, units: Sequence[Unit], window: int) -> int:
        """What the compact command keeps verbatim: the latest exchange (the latest user message
        and everything after it), never more than the fresh tail. Keeping the whole fresh tail
        (10 % of the window) made the command a no-op on short sessions in large windows: a
        40-turn chat in a 200k window is all tail, and "Nothing to compact" is not what someone
        who pressed compact asked for."""
        start = self.tail_start(units, window)
        if self.history.last_user is not None:
            start = max(start, self.history.last_user)
        return start

    def manual_span_tokens(self, budget: Budget) -> int:
        """Tokens the compact command would summarize: the rows still in the prompt between the
        removed ones and the kept latest exchange, anchors aside (never removed)."""
        history = self.history
        live = history.live_from()
        tail = self.manual_tail_start(split_units(history.rows, live), budget.window)
        kept = history.never_removed()
        return sum(history.row_tokens(i) for i in range(live, tail) if i not in kept)

    def _fence_index(self) -> int:
        """Row index of the previous event's tail start (restored from the store after a
        restart), or 0 before any event."""
        if self._fence_id is None:
            done = [
                e
                for e in self.history.store.events(self.history.session_id, COMPACTION, limit=4)
                if e.data.get("state") == "done" and e.data.get("tail_start_id")
            ]
            self._fence_id = done[-1].data["tail_start_id"] if done else 0
        return self.history.index_of_id(self._fence_id) if self._fence_id else 0

    def _point_anchors(self, plan: Any, rows: Iterable[int], model: str, event_id: int) -> None:
        """The floor's last reduction: the human anchor (and stored system rows) shrink to a
        one-line pointer with their handle, when that is smaller. Only the latest user message
        is never reduced further: it is what the turn answers."""
        for index in sorted(rows):
            row = self.history.rows[index]
            current = self.history.row_tokens(index)
            # A system row stays a system row (its place in the prompt means something).
            message = {"role": row.role, "content": anchor_pointer(row.id, row.tokens, row.role)}
            tokens = count_message_tokens(message, model)
            if tokens >= current:
                continue
            plan.views[row.id] = View(
                SHRUNK, message, tokens, "left out to fit the window", msg_handle(row.id), event_id
            )
            plan.total -= current - tokens
            plan.saved += current - tokens
            plan.ops["anchor_pointer"] = plan.ops.get("anchor_pointer", 0) + 1

    def removed_rows(self, plan: Any) -> list[int]:
        return sorted(self.history.index_of_id(mid) for mid, view in plan.views.items() if view.kind == REMOVED)


def _or(value: int | None, default: int) -> int:
    """A per-request setting (TurnInput), or the engine config's when the caller set none."""
    return default if value is None else value
