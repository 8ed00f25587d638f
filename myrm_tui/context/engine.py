"""The context engine: stored rows in, a budget-fitting, cache-stable, provider-valid prompt out.

One `ContextEngine` per session, composed of named parts that share one `RenderedHistory`:
the arrival filter (`arrival_filter.py`), the compactor (`compactor.py`), the summary area
(`summary_area.py`) and the summary preparation (`compaction/prepared_summaries.py`). The stages run in the
order `pipeline.STAGES` defines (docs/context-engine.md, "Stages", is generated from it).

Why a lock: the parts mutate the shared history (rows, views, rendered entries), and a manual
compaction may run while background summary work (`maintain`, between steps or after a turn)
is in flight, possibly on another thread. Every public entry point that reads or mutates engine
state holds one `threading.RLock` (reentrant: an entry point calls others, e.g. `maintain` runs
`rows_removed_next`); the preparation's coroutines hold it only between their awaits, so a
model call never blocks a compaction. The lock keeps threads apart, not coroutines: that works
because no `with self._lock` block contains an await (keep it so). `note_provider_call` only
records a timestamp and stays unlocked.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from myrm_tui.context.arrival_filter import filter_arrivals
from myrm_tui.context.assemble_report import AssembleReport, BudgetFigures, IntegrityFigures, LadderFigures
from myrm_tui.context.cache_observer import CacheVerdict
from myrm_tui.context.cache_watch import CacheWatch
from myrm_tui.context.compaction.breaker import StageBreakers
from myrm_tui.context.compaction.compactor import Compactor, EngineStats, PreCompactHook
from myrm_tui.context.compaction.dag import SummaryDag
from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.compaction.event_warmup import EventWarmup
from myrm_tui.context.compaction.objective_note import ObjectiveNotes
from myrm_tui.context.compaction.prepared_summaries import PrepareProgress, ProgressFn, SummaryPreparation
from myrm_tui.context.compaction.summarizers import Summarizer
from myrm_tui.context.compaction.summary_area import FileReader, SummaryArea
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.pipeline import (
    CACHE_OPTIMIZE,
    COMPRESS,
    ENCODE_SAFE,
    INTEGRITY,
    MEDIA_RESOLVE,
    OBJECTIVE_NOTE,
    PREFLIGHT,
    RENDER,
    SMART_FILTER,
    STAGE_NAMES,
    SYNC,
)
from myrm_tui.context.prompt import AssembledPrompt, ContextExhausted, NothingWorthCompacting
from myrm_tui.context.report import StageClock, StageTimer
from myrm_tui.context.rows.views import SHRUNK, UNTRUSTED_OPEN, View, msg_handle
from myrm_tui.context.signature_scrub import replay_breaks_cache
from myrm_tui.context.stages.cache_optimize import apply_markers, breakpoints_for
from myrm_tui.context.stages.compress import EMERGENCY, SUMMARIZE, plan_compaction
from myrm_tui.context.stages.media_resolve import MediaResolver
from myrm_tui.context.view_log import StoreViewLog, ViewLog
from myrm_tui.context.window import ladder
from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.config import CACHE_TTL_S, DEFAULT_CONFIG, EngineConfig
from myrm_tui.context.window.turn_input import TurnInput
from myrm_tui.store.records import MessageRecord

if TYPE_CHECKING:
    from myrm_tui.context.summary.breaker import SummarizerBreaker
    from myrm_tui.context.summary.chunking import Chunk
    from myrm_tui.context.summary.client import SummarizerCall, SummaryModel
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.store.store import Store

# Preflight passes, in order: (trigger, no_tail, floor); see `assemble`.
PREFLIGHT_PASSES = (("preflight", False, False), ("preflight-tail", True, False), ("preflight-floor", True, True))


@dataclass(frozen=True)
class _OwedEvent:
    """The safety net's event a request went out without (`EngineConfig.compact_while_answering`):
    what it would have been called with, so it runs the same whenever it is paid."""

    budget: Budget
    inp: TurnInput
    now: float
    why: str


class ContextEngine:
    def __init__(
        self,
        store: Store,
        session_id: str,
        *,
        config: EngineConfig = DEFAULT_CONFIG,
        view_log: ViewLog | None = None,
        summarizer: Summarizer | None = None,
        file_reader: FileReader | None = None,
        pre_compact: PreCompactHook | None = None,
        clock: Callable[[], float] = time.time,
    ):
        from myrm_tui.context.summary.breaker import SummarizerBreaker

        self.store = store
        self.session_id = session_id
        self.config = config
        self.view_log: ViewLog = view_log if view_log is not None else StoreViewLog(store)
        self.clock = clock
        self.breakers = StageBreakers(config.breaker_threshold)
        # Per session (not process-global): one session's failing summarizer must not stop another's.
        self.summary_breaker = SummarizerBreaker()
        self.resolver = MediaResolver(store.vault)
        self._lock = threading.RLock()

        views, synthetic = self.view_log.load_views(session_id)
        self.history = RenderedHistory(store, session_id, config, views, synthetic)
        self.dag = SummaryDag(store, session_id, fake=summarizer)
        self.summaries = SummaryArea(self.history, self.dag, self.breakers, file_reader)
        self.compactor = Compactor(self.history, self.summaries, self.view_log, self.breakers, pre_compact)
        self.preparation = SummaryPreparation(
            self.history, self.summaries, self.compactor, self.dag, self._lock, self.rows_removed_next, self._pay_owed
        )
        self.warmup = EventWarmup(
            self.history, self.summaries, self.compactor, self._lock, self.rows_removed_next, self.preparation.ready
        )
        self.objective = ObjectiveNotes(self.history)

        # When the last request went out, whether the cache is warm, where a prompt broke it.
        self.cache = CacheWatch()
        self._last_model: str | None = None  # the model of the previous assemble (signature scrubber)
        self.usage_ratio = 1.0  # provider-reported prompt tokens ÷ our estimate, last call
        self.pending_tier: str | None = None
        self._owed: _OwedEvent | None = None  # see `pay_owed`

    # ------------------------------------------------------------------ the parts' state, read-only
    @property
    def rows(self) -> list[MessageRecord]:
        return self.history.rows

    @property
    def views(self) -> dict[int, View]:
        return self.history.views

    @property
    def stats(self) -> EngineStats:
        return self.compactor.stats

    # ------------------------------------------------------------------ feedback from the caller
    def note_provider_call(
        self,
        at: float | None = None,
        *,
        prompt_tokens: int | None = None,
        estimated_tokens: int | None = None,
        cached_read_tokens: int | None = None,
        cached_write_tokens: int = 0,
    ) -> CacheVerdict | None:
        """A request went out (cache warm from now); usage corrects our token estimate. With the
        provider's cache figures, the assemble's cache prediction is checked (phase 2): the
        verdict, or None when nothing can be concluded."""
        self.cache.last_call_at = self.clock() if at is None else at
        if prompt_tokens and estimated_tokens:
            # Clamped: one odd report (a provider counting images differently) must not swing
            # every later decision.
            self.usage_ratio = min(1.5, max(0.8, prompt_tokens / estimated_tokens))
        if cached_read_tokens is None:
            return None
        with self._lock:
            return self.cache.observer.observe(prompt_tokens or 0, cached_read_tokens, cached_write_tokens, CACHE_TTL_S)

    # ------------------------------------------------------------------ the turn entry point
    def assemble(self, inp: TurnInput) -> AssembledPrompt:
        with self._lock:
            # The breakers time the stages that run only inside an event (`pipeline.TIMED_BY_BREAKER`).
            self.breakers.clock = clock = StageClock()
            try:
                return self._assemble(inp, clock)
            finally:
                self.breakers.clock = None

    def take_notices(self) -> list[str]:
        """What the user should hear about the engine since the last call: a stage's breaker
        tripped (that stage is off for the session). The agent shows each as a notice."""
        with self._lock:
            return self.breakers.take_trips()

    def _assemble(self, inp: TurnInput, clock: StageClock) -> AssembledPrompt:
        started = time.perf_counter()
        history, compactor = self.history, self.compactor
        now = self.clock() if inp.now is None else inp.now
        timer = StageTimer()
        budget = inp.budget()
        fixed = inp.fixed_tokens()

        # The event the previous request owes runs on the history that request was built from.
        self._pay_owed()
        with timer.stage(SYNC) as st, clock.time(SYNC):
            history.use_anchor_turns(inp.prefix_anchor_turns)
            history.use_thinking_keep(inp.thinking_keep_turns)
            history.sync()
            new_rows = history.take_unfiltered()
            st.items = len(new_rows)
        with timer.stage(SMART_FILTER) as st, clock.time(SMART_FILTER):
            decided: dict[int, View] = self.breakers.run(
                SMART_FILTER,
                lambda: self._filter_arrivals(inp, new_rows, budget, fixed),
                {},
            )
            st.items = len(decided)
        with timer.stage(RENDER) as st:
            st.tokens_in = history.tokens
            history.render(inp.render_key(), clock)
            st.tokens_out = history.tokens

        event: CompactionEvent | None = None
        # An event run since the last request (the idle step's `compact_ahead`, the compact
        # command): this request is the first to send its result, so its report carries it.
        carried = compactor.unreported
        compactor.interval.note_request(
            self._tokens_for_ladder(fixed), compactor.event_target(budget), turn=history.last_user
        )
        decision = self._decide(inp, budget, fixed, now, inp.force_tier)
        self.pending_tier = decision.deferred
        owing = decision if self._may_owe(decision, inp, budget, fixed) else None
        if owing is not None:
            self._owed = _OwedEvent(budget, inp, now, f"{decision.why}; ran while the model answered")
            why = f"{decision.why}; runs while the model answers (the prompt fits)"
            decision = replace(decision, run=None, why=why)
        if decision.run:
            with timer.stage(COMPRESS) as st, clock.time(COMPRESS):
                st.tokens_in = fixed + history.tokens
                trigger = inp.trigger if inp.force_tier else decision.why
                event = self._event(decision.run, budget, inp, now, trigger=trigger, economic=decision.economic)
                st.tokens_out = fixed + history.tokens
                st.items = event.items or 0 if event is not None else 0
        # Signature replay scrubber: a replay that re-bills the history stops resending old signed blocks.
        model_changed = self._last_model not in (None, inp.model.name)
        if replay_breaks_cache(
            event is not None or carried is not None, self.cache.warm(now, inp.model), model_changed
        ):
            history.scrub_signatures(inp.render_key())
        self._last_model = inp.model.name

        with timer.stage(INTEGRITY) as st, clock.time(INTEGRITY):
            messages_out, integrity, repair_delta = history.valid_history(inp.model.name)
            st.items = len(integrity.dangling_repaired) + integrity.orphans_dropped
        with timer.stage(PREFLIGHT) as st, clock.time(PREFLIGHT):
            # Each pass runs only while the prompt is still over: an emergency event outside the
            # fresh tail; then inside it too (one turn with many large outputs), oldest first;
            # then the floor (docs/context-engine.md, "Progress"): the anchors shrink to pointers
            # and the summary area to one line per node, so only the fixed prefix and the latest
            # user message can still make a turn fail.
            for trigger, no_tail, floor in PREFLIGHT_PASSES:
                if fixed + history.tokens + repair_delta <= budget.prompt_limit:
                    break
                if trigger == "preflight" and event is not None and event.tier == EMERGENCY:
                    continue
                event = self._event(
                    EMERGENCY,
                    budget,
                    inp,
                    now,
                    trigger=trigger,
                    no_tail=no_tail,
                    floor=floor,
                    overhead=max(0, repair_delta),
                    otherwise=event,
                )
                messages_out, integrity, repair_delta = history.valid_history(inp.model.name)
                if owing is not None:  # the repaired prompt did not fit after all: this event is the one owed
                    self._owed, decision, owing = None, owing, None
            st.tokens_out = fixed + history.tokens + repair_delta
            if fixed + history.tokens + repair_delta > budget.prompt_limit:
                latest = history.entry_of_row.get(history.last_user) if history.last_user is not None else None
                raise ContextExhausted(
                    fixed + history.tokens + repair_delta,
                    budget,
                    inp.model.name,
                    fixed_tokens=fixed,
                    message_tokens=history.entries[latest].tokens if latest is not None else 0,
                )
        messages = [{"role": "system", "content": inp.system_prompt}, *messages_out]
        tokens = fixed + history.tokens + repair_delta
        with clock.time(OBJECTIVE_NOTE):
            restate = self.config.restate_objective if inp.restate_objective is None else inp.restate_objective
            note = self.objective.note(inp.model.name, budget.prompt_limit - tokens) if restate else None

        with timer.stage(CACHE_OPTIMIZE) as st, clock.time(CACHE_OPTIMIZE):
            cache = self.cache
            digests = [cache.system_digest(inp.system_prompt), *history.digests(messages_out)]
            # A compaction run between two requests (the idle step's, the compact command) explains a break.
            cache.last_break = cache.detect_break(digests, event or carried)
            compactor.unreported = None
            cache.predict(now, inp.model, cache.last_break)
            points = breakpoints_for(len(messages), len(cache.previous_digests))
            cache.previous_digests = digests
            wire = apply_markers(messages, points, inp.model.name)
            if note is not None:  # after the markers: the cached prefix ends at the last real message
                wire, tokens = [*wire, note.message], tokens + note.tokens
        with timer.stage(MEDIA_RESOLVE) as st, clock.time(MEDIA_RESOLVE):
            resolver = self.resolver if history.media_rows else None
        with clock.time(ENCODE_SAFE):  # and the media resolve: one pass, kept per message
            wire = history.outgoing(wire, resolver)

        self.stats.assembles += 1
        report = AssembleReport(
            tokens=tokens,
            messages=len(wire),
            budget=BudgetFigures.of(
                budget, fixed=fixed, history=history.tokens, tokens=tokens, usage_ratio=self.usage_ratio
            ),
            ladder=LadderFigures(decision.tier, decision.why, decision.deferred),
            stages=tuple(timer.stages),
            breakers=self.breakers.states(),
            event=event or carried,
            cache_break=self.cache.last_break,
            integrity=IntegrityFigures(integrity.orphans_dropped, tuple(integrity.dangling_repaired)),
            ms=round((time.perf_counter() - started) * 1000, 3),
            stage_ms=clock.figures(STAGE_NAMES),
        )
        return AssembledPrompt(wire, list(inp.tools), tokens, budget, points, report)

    # ------------------------------------------------------------------ manual compaction
    def summarize_now(self, inp: TurnInput) -> dict[str, Any] | None:
        """The user's compact command, its synchronous half: every unit outside the kept tail
        (`Compactor.manual_tail_start`) leaves the prompt and becomes summary nodes: the ones a
        model prepared (`prepare_for_compact`, awaited before this by the agent), extractive ones
        for the rest. Anchors stay. Returns the event as stored, or None when there was nothing
        to summarize."""
        return self._event_now(SUMMARIZE, inp, manual=True)

    def check_worth_compacting(self, inp: TurnInput) -> None:
        """Raise `NothingWorthCompacting` when the compact command would summarize fewer tokens
        than `min_manual_compact_tokens` (a summary would grow the prompt or save next to
        nothing); nothing at all to summarize is not an error (`summarize_now` returns None)."""
        with self._lock:
            span = self.compactor.manual_span_tokens(self._caught_up(inp))
        least = self.config.min_manual_compact_tokens
        if 0 < span < least:
            raise NothingWorthCompacting(span, least)

    def compact(self, inp: TurnInput, tier: str = "full", focus: str | None = None) -> dict[str, Any] | None:
        """Run one ladder tier now over everything outside the fresh tail (no target to stop at);
        `focus` (a path or topic) is spared by the masking. Not the user's compact command
        (`summarize_now`): tests and tools that need a given tier. Returns the event as stored,
        or None when nothing could change."""
        return self._event_now(tier, inp, focus=(focus,) if focus else ())

    def _event_now(
        self, tier: str, inp: TurnInput, *, manual: bool = False, focus: Sequence[str] = ()
    ) -> dict[str, Any] | None:
        """One compaction event asked for by someone (no target to stop at), as stored."""
        with self._lock:
            event = self.compactor.event(
                tier,
                self._caught_up(inp),
                inp,
                self.clock() if inp.now is None else inp.now,
                trigger=inp.trigger if inp.trigger != "auto" else "manual",
                target_ratio=0.0,
                manual=manual,
                focus=focus,
            )
            return event.to_dict() if event is not None else None

    def rows_removed_next(self, inp: TurnInput, *, if_emergency_now: bool = False, economic: bool = False) -> list[int]:
        """Row indices the next `assemble` would remove, by a dry run of its ladder decision and
        the emergency plan (nothing is stored or changed but the arrival filter, which the next
        assemble would run the same way). Empty when it would remove nothing: an emergency that
        masking alone satisfies removes no turn, and a summary written for it would wait unused.
        `if_emergency_now`: what an emergency would remove now, whatever the ladder says (the
        oldest of these rows are what the next removal takes, whenever it comes); `economic`: the
        economic event's removal (its own floor and tail)."""
        with self._lock:
            budget = self._caught_up(inp)
            now = self.clock() if inp.now is None else inp.now
            total = inp.fixed_tokens() + self.history.tokens
            decision = self._decide(inp, budget, inp.fixed_tokens(), now, None)
            if decision.run != EMERGENCY and not if_emergency_now:
                return []
            plan = plan_compaction(
                self.compactor.plan_input(
                    EMERGENCY, budget, inp, total, event_id=0, economic=economic or decision.economic
                )
            )
            return self.compactor.removed_rows(plan)

    @property
    def owes_event(self) -> bool:
        """The last request went out without the event it set off (`pay_owed`)."""
        return self._owed is not None

    def pay_owed(self) -> CompactionEvent | None:
        """Run the event the last request went out without (the `compact_while_answering` setting).
        The agent calls this in a worker thread once the request is sent, so it runs while the
        model answers; whatever reads the rows that arrive next (`assemble`, the idle step, the
        summaries' preparation) runs it first if the agent did not, so it always sees the history
        the request was built from and writes what the request would have written inside it.
        None when nothing is owed."""
        with self._lock:
            return self._pay_owed()

    def _pay_owed(self) -> CompactionEvent | None:
        owed, self._owed = self._owed, None
        if owed is None:
            return None
        return self._event(EMERGENCY, owed.budget, owed.inp, owed.now, trigger=owed.why)

    def _event(
        self,
        tier: str,
        budget: Budget,
        inp: TurnInput,
        now: float,
        *,
        trigger: str,
        otherwise: CompactionEvent | None = None,
        **options: Any,
    ) -> CompactionEvent | None:
        """One compaction event (`Compactor.event`, whose keyword `options` these are) behind the
        compression stage's breaker: an event that raises trips it and yields `otherwise`, and
        the request goes out without it rather than failing."""
        event: CompactionEvent | None = self.breakers.run(
            COMPRESS, partial(self.compactor.event, tier, budget, inp, now, trigger=trigger, **options), otherwise
        )
        return event

    def _may_owe(self, decision: ladder.Decision, inp: TurnInput, budget: Budget, fixed: int) -> bool:
        """Whether this request may go out without the event the ladder runs: only the safety net
        set off by the prompt's own growth (not a forced, manual or economic one), and only while
        the prompt fits the budget by our count and by the provider's (`usage_ratio`)."""
        wanted = inp.compact_while_answering
        return (
            (self.config.compact_while_answering if wanted is None else wanted)
            and decision.run == EMERGENCY
            and not inp.force_tier
            and not decision.economic
            and max(fixed + self.history.tokens, self._tokens_for_ladder(fixed)) <= budget.prompt_limit
        )

    def compact_ahead(self, inp: TurnInput) -> CompactionEvent | None:
        """The idle step's compaction (`ladder.decide_ahead`): the event the next turn would run
        inside its requests, run now while the user reads; stored and reported like any other
        (the next assemble's report carries it and explains the cache break with it). None when
        nothing is due."""
        with self._lock:
            budget = self._caught_up(inp)
            fixed = inp.fixed_tokens()
            tokens = self._tokens_for_ladder(fixed)
            compactor = self.compactor
            now = self.clock() if inp.now is None else inp.now
            decision = ladder.decide_ahead(
                now=self._decide(inp, budget, fixed, now, None),
                tokens=tokens,
                turn_growth=compactor.interval.largest_turn_growth(),
                budget=budget,
                config=self.config,
                economic_due_next=compactor.economic_due_next(budget, tokens),
            )
            if decision is None or decision.run is None:
                return None
            return self._event(decision.run, budget, inp, now, trigger=decision.why, economic=decision.economic)

    async def compact_ahead_idle(self, inp: TurnInput) -> CompactionEvent | None:
        """`compact_ahead` in a worker thread: an event is 20-80 ms of CPU, too long for the UI's
        loop. Not stoppable once started (an event is one store transaction); a new turn's
        assemble waits for it on the lock, as it would have run the event itself."""
        return await asyncio.to_thread(self.compact_ahead, inp)

    async def settled(self) -> None:
        """Returns once no idle-step work holds the engine: a worker thread's event or scan
        cannot be stopped, and the store must not close under it."""

        def wait() -> None:
            with self._lock:
                pass

        await asyncio.to_thread(wait)

    # ------------------------------------------------------------------ background summaries
    async def maintain(
        self,
        inp: TurnInput,
        *,
        model: str | None = None,
        window: int = 0,
        call: SummarizerCall | None = None,
        settings: CallSettings | None = None,
        breaker: SummarizerBreaker | None = None,
        models: Sequence[SummaryModel] | None = None,
    ) -> dict[str, Any] | None:
        """Idle-time summary work (`SummaryPreparation.maintain`)."""
        return await self.preparation.maintain(
            inp, model=model, window=window, call=call, settings=settings, breaker=breaker, models=models
        )

    async def warm_next_event(self, inp: TurnInput) -> int:
        """Idle-time scans for the next removal's summaries (`EventWarmup.warm`); rows warmed."""
        return await self.warmup.warm(inp)

    async def prepare_for_compact(
        self,
        inp: TurnInput,
        *,
        models: Sequence[SummaryModel],
        breaker: SummarizerBreaker | None = None,
        focus: str | None = None,
        progress: ProgressFn | None = None,
    ) -> list[dict[str, Any]]:
        """The compact command's model work (`SummaryPreparation.prepare_for_compact`)."""
        return await self.preparation.prepare_for_compact(
            inp, models=models, breaker=breaker, focus=focus, progress=progress
        )

    async def prepare_folds(
        self,
        inp: TurnInput,
        *,
        models: Sequence[SummaryModel],
        breaker: SummarizerBreaker | None = None,
        focus: str | None = None,
        progress: ProgressFn | None = None,
        done: int = 0,
    ) -> list[dict[str, Any]]:
        return await self.preparation.prepare_folds(
            inp, models=models, breaker=breaker, focus=focus, progress=progress, done=done
        )

    def chunks_before_removal(self, inp: TurnInput, models: Sequence[SummaryModel]) -> list[Chunk]:
        return self.preparation.chunks_before_removal(inp, models)

    async def prepare_chunks(
        self,
        inp: TurnInput,
        chunks: Sequence[Chunk],
        *,
        models: Sequence[SummaryModel],
        breaker: SummarizerBreaker | None = None,
        kind: str = "prepare",
        progress: ProgressFn | None = None,
    ) -> list[dict[str, Any]]:
        return await self.preparation.prepare_chunks(
            inp, chunks, models=models, breaker=breaker, kind=kind, progress=progress
        )

    # ------------------------------------------------------------------ reads for tools and the agent
    def excerpt_of(self, message_id: int) -> View | None:
        """The excerpt the prompt shows instead of message `message_id`, when it was too large to
        send whole (None when the prompt carries it verbatim)."""
        with self._lock:
            view = self.history.views.get(message_id)
        return view if view is not None and view.kind == SHRUNK else None

    def call_ids(self) -> Iterable[str]:
        """Tool-call ids already used in this session (as of the last assemble): a copy, taken
        under the lock, so a compaction on another thread cannot change it while it is read."""
        with self._lock:
            return tuple(self.history.calls)

    def replacements(self) -> dict[str, str]:
        """handle → why it is not verbatim in the prompt (for ctx_inspect)."""
        with self._lock:
            return {msg_handle(mid): f"{v.kind}: {v.reason}" for mid, v in self.history.views.items()}

    def last_row(self) -> MessageRecord | None:
        """The newest stored message of the session (the agent's resend check reads it). Rows
        read here are filtered at the next assemble like any other new row."""
        with self._lock:
            self._pay_owed()
            self.history.sync()
            return self.history.rows[-1] if self.history.rows else None

    # ------------------------------------------------------------------ helpers
    def _caught_up(self, inp: TurnInput) -> Budget:
        """Sync, filter and render what arrived since the last call, as `assemble` starts."""
        self._pay_owed()
        budget = inp.budget()
        self.history.use_anchor_turns(inp.prefix_anchor_turns)
        self.history.use_thinking_keep(inp.thinking_keep_turns)
        self.history.sync()
        new_rows, fixed = self.history.take_unfiltered(), inp.fixed_tokens()
        self._filter_arrivals(inp, new_rows, budget, fixed)
        self.history.render(inp.render_key())
        return budget

    def _filter_arrivals(
        self, inp: TurnInput, new_rows: list[MessageRecord], budget: Budget, fixed: int
    ) -> dict[int, View]:
        """The smart filter on the rows that arrived since the last call (decided once per row)."""
        return filter_arrivals(
            self.history,
            new_rows,
            budget,
            inp.model.name,
            self.view_log,
            fixed=fixed,
            file_read_exempt=inp.file_read_exempt,
            filters=inp.output_filters,
        )

    def _decide(
        self, inp: TurnInput, budget: Budget, fixed: int, now: float, force_tier: str | None
    ) -> ladder.Decision:
        return ladder.decide(
            tokens=self._tokens_for_ladder(fixed),
            budget=budget,
            config=self.config,
            cache_warm=self.cache.warm(now, inp.model),
            force_tier=force_tier,
            recent_savings=self.stats.tier_savings,
            economic_due=self.compactor.economic_progress(budget) >= 1.0,
        )

    def _tokens_for_ladder(self, fixed: int) -> int:
        return int((fixed + self.history.tokens) * self.usage_ratio)


__all__ = ["UNTRUSTED_OPEN", "ContextEngine", "PrepareProgress", "TurnInput"]
