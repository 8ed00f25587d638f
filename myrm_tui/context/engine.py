"""The context engine: stored rows in, a budget-fitting, cache-stable, provider-valid prompt out.

One `ContextEngine` per session keeps an incremental view of the history, so the per-turn cost
grows with the new rows, not with the session: rows are rendered once and cached; only
compaction events (batched, rare) re-render from the first changed position.

Pipeline per `assemble` (one module per stage under `stages/`; docs/context-engine.md, "Stages"):
 1 thinking cleanup · 2 media filter · 3 smart filter (new rows) · 4 cache-TTL prune (run the
 deferred event once the provider cache is cold) · 5 pre-compact hook · 6 compress (the ladder's
 event) · 7 session notes (kept in markers) · 8 summarize (slot: the marker's summary) ·
 9 post-compaction reread · 10 normalize · 11 media resolve · 12 cache optimise · 13 integrity ·
 14 preflight fit.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from myrm_tui.context import ladder
from myrm_tui.context.breaker import StageBreakers
from myrm_tui.context.budget import Budget, budget_for
from myrm_tui.context.config import CACHE_TTL_S, DEFAULT_CONFIG, EngineConfig
from myrm_tui.context.dag import SUMMARY_BRIEF_KIND, SUMMARY_KIND, SummaryDag
from myrm_tui.context.engine_prepare import SummaryPreparation
from myrm_tui.context.engine_summaries import SummaryEvents
from myrm_tui.context.family import family_of, provider_of
from myrm_tui.context.filters import filter_output
from myrm_tui.context.integrity import repair_pairs
from myrm_tui.context.intent import _text_of, build_intent
from myrm_tui.context.media import has_media
from myrm_tui.context.pointers import anchor_pointer
from myrm_tui.context.prefix_tokens import fixed_tokens, tools_key
from myrm_tui.context.prompt import AssembledPrompt, ContextExhausted
from myrm_tui.context.report import StageTimer
from myrm_tui.context.stages.cache_optimize import (
    CacheBreak,
    apply_markers,
    breakpoints_for,
    first_difference,
    message_digest,
)
from myrm_tui.context.stages.compress import (
    EMERGENCY,
    SUMMARIZE,
    PlanInput,
    plan_compaction,
    shrunk_call_arguments,
)
from myrm_tui.context.stages.media_filter import strip_media
from myrm_tui.context.stages.media_resolve import MediaResolver
from myrm_tui.context.stages.normalize import normalize
from myrm_tui.context.stages.thinking_cleanup import clean_thinking
from myrm_tui.context.summarizers import Summarizer
from myrm_tui.context.tokens import count_message_tokens
from myrm_tui.context.units import Unit, last_user_index, split_units
from myrm_tui.context.view_log import StoreViewLog, SyntheticView, ViewLog
from myrm_tui.context.views import (
    FILTERED,
    REMOVED,
    SHRUNK,
    UNTRUSTED_OPEN,
    View,
    filtered_header,
    msg_handle,
    parse_arguments,
)
from myrm_tui.llm.model_info import ModelInfo
from myrm_tui.store.records import MessageRecord

FileReader = Callable[[str], "str | None"]

# Preflight passes, in order: (trigger, no_tail, floor); see `assemble`.
PREFLIGHT_PASSES = (("preflight", False, False), ("preflight-tail", True, False), ("preflight-floor", True, True))
PreCompactHook = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class TurnInput:
    """What the caller knows per request: the fixed prefix and the model."""

    system_prompt: str
    tools: Sequence[dict[str, Any]]
    model: ModelInfo
    max_output_tokens: int
    now: float | None = None  # seconds; None = wall clock (replay passes a virtual clock)
    force_tier: str | None = None  # "light"/"full"/"emergency": compact now (manual, or a provider overflow)
    trigger: str = "auto"


@dataclass
class _Entry:
    """One message of the cached history part of the prompt."""

    row: int  # index into rows, or -1 for a synthetic message
    message: dict[str, Any]
    tokens: int
    anchor: int = -1  # the row index this entry renders or precedes (entries are ordered by it)
    digest: str = ""  # of `message`, for the cache-break detector (computed once)


class _TokenView:
    """Current prompt tokens per row index, read lazily (the planner only looks at live rows)."""

    def __init__(self, engine: ContextEngine):
        self._engine = engine

    def __getitem__(self, index: int) -> int:
        return self._engine._row_tokens(index)

    def __len__(self) -> int:
        return len(self._engine.rows)


@dataclass
class EngineStats:
    assembles: int = 0
    events: int = 0
    tier_savings: dict[str, list[int]] = field(default_factory=dict)


class ContextEngine(SummaryEvents, SummaryPreparation):
    def __init__(
        self,
        store: Any,
        session_id: str,
        *,
        config: EngineConfig = DEFAULT_CONFIG,
        view_log: ViewLog | None = None,
        summarizer: Summarizer | None = None,
        file_reader: FileReader | None = None,
        pre_compact: PreCompactHook | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.store = store
        self.session_id = session_id
        self.config = config
        self.view_log: ViewLog = view_log if view_log is not None else StoreViewLog(store)
        self.summarizer = summarizer
        self.dag = SummaryDag(store, session_id, fake=summarizer)
        from myrm_tui.context.summary.breaker import SummarizerBreaker

        # Per session (not process-global): one session's failing summarizer must not stop another's.
        self.summary_breaker = SummarizerBreaker()
        self._failed_folds: set[tuple[str, ...]] = set()  # children a model could not fold (not asked again)
        self.file_reader = file_reader
        self.pre_compact = pre_compact
        self.clock = clock
        self.breakers = StageBreakers(config.breaker_threshold)
        self.resolver = MediaResolver(getattr(store, "vault", None))
        self.stats = EngineStats()

        self.rows: list[MessageRecord] = []
        self.views: dict[int, View] = {}
        self.synthetic: list[SyntheticView] = []
        self.views, self.synthetic = self.view_log.load_views(session_id)

        self._entries: list[_Entry] = []
        self._unfiltered: list[MessageRecord] = []  # synced, not yet seen by the smart filter
        self._history_tokens = 0
        self._rendered_upto = 0  # rows[: _rendered_upto] are in _entries
        self._entry_of_row: dict[int, int] = {}
        self._render_key: tuple[Any, ...] | None = None
        self._media_rows: list[int] = []
        self._last_user = None
        self._first_user = None
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}  # tool_call_id → (name, arguments)
        self._system_rows: list[int] = []
        self._live_hint = 0
        self._fence_id: int | None = None
        self._unreported_event: dict[str, Any] | None = None

        self.last_call_at: float | None = None
        self.usage_ratio = 1.0  # provider-reported prompt tokens ÷ our estimate, last call
        self._previous_digests: list[str] = []
        self._previous_tokens: list[int] = []
        self.last_break: CacheBreak | None = None
        self.pending_tier: str | None = None
        self._system_key: str | None = None
        self._system_hash = ""

    # ------------------------------------------------------------------ feedback from the caller
    def note_provider_call(
        self, at: float | None = None, *, prompt_tokens: int | None = None, estimated_tokens: int | None = None
    ) -> None:
        """A request went out (cache warm from now); usage corrects our token estimate."""
        self.last_call_at = self.clock() if at is None else at
        if prompt_tokens and estimated_tokens:
            # Clamped: one odd report (a provider counting images differently) must not swing
            # every later decision.
            self.usage_ratio = min(1.5, max(0.8, prompt_tokens / estimated_tokens))

    # ------------------------------------------------------------------ the turn entry point
    def assemble(self, inp: TurnInput) -> AssembledPrompt:
        started = time.perf_counter()
        now = self.clock() if inp.now is None else inp.now
        timer = StageTimer()
        budget = budget_for(inp.model.context_window, inp.max_output_tokens)
        family = family_of(inp.model.name)
        fixed = fixed_tokens(inp.system_prompt, tuple(inp.tools) and tools_key(inp.tools), inp.model.name)

        with timer.stage("sync") as st:
            self._sync_rows()
            new_rows = self._take_unfiltered()
            st.items = len(new_rows)
        with timer.stage("smart_filter") as st:
            decided: dict[int, View] = self.breakers.run(
                "smart_filter", lambda: self._ingest_views(new_rows, budget, inp.model.name), {}
            )
            st.items = len(decided)
        key = (family, inp.model.supports_vision, inp.model.name)
        with timer.stage("render") as st:
            st.tokens_in = self._history_tokens
            self._render(key)
            st.tokens_out = self._history_tokens

        event: dict[str, Any] | None = None
        decision = ladder.decide(
            tokens=int((fixed + self._history_tokens) * self.usage_ratio),
            budget=budget,
            config=self.config,
            cache_warm=self._cache_warm(now, inp.model),
            force_tier=inp.force_tier,
            recent_savings=self.stats.tier_savings,
        )
        self.pending_tier = decision.deferred
        if decision.run:
            with timer.stage("compress") as st:
                st.tokens_in = fixed + self._history_tokens
                event = self.breakers.run(
                    "compress",
                    lambda: self._compaction_event(
                        decision.run, budget, inp, now, trigger=inp.trigger if inp.force_tier else decision.why
                    ),
                    None,
                )
                st.tokens_out = fixed + self._history_tokens
                st.items = (event or {}).get("items", 0)

        with timer.stage("integrity") as st:
            history, integrity, repair_delta = self._valid_history(inp.model.name)
            st.items = len(integrity.dangling_repaired) + integrity.orphans_dropped
        with timer.stage("preflight") as st:
            # Each pass runs only while the prompt is still over: an emergency event outside the
            # fresh tail; then inside it too (one turn with many large outputs), oldest first;
            # then the floor (docs/context-engine.md, "Progress"): the anchors shrink to pointers
            # and the summary area to one line per node, so only the fixed prefix and the latest
            # user message can still make a turn fail.
            for trigger, no_tail, floor in PREFLIGHT_PASSES:
                if fixed + self._history_tokens + repair_delta <= budget.prompt_limit:
                    break
                if trigger == "preflight" and event is not None and event["tier"] == EMERGENCY:
                    continue
                overhead = max(0, repair_delta)
                event = self.breakers.run(
                    "compress",
                    partial(
                        self._compaction_event,
                        EMERGENCY,
                        budget,
                        inp,
                        now,
                        trigger=trigger,
                        no_tail=no_tail,
                        floor=floor,
                        overhead=overhead,
                    ),
                    event,
                )
                history, integrity, repair_delta = self._valid_history(inp.model.name)
            st.tokens_out = fixed + self._history_tokens + repair_delta
            if fixed + self._history_tokens + repair_delta > budget.prompt_limit:
                latest = self._entry_of_row.get(self._last_user) if self._last_user is not None else None
                raise ContextExhausted(
                    fixed + self._history_tokens + repair_delta,
                    budget,
                    inp.model.name,
                    fixed_tokens=fixed,
                    message_tokens=self._entries[latest].tokens if latest is not None else 0,
                )
        messages = [{"role": "system", "content": inp.system_prompt}, *history]
        tokens = fixed + self._history_tokens + repair_delta

        with timer.stage("cache_optimize") as st:
            digests = [self._system_digest(inp.system_prompt), *self._history_digests(history)]
            # A compaction run between two requests (the user's compact command) explains a break.
            self.last_break = self._detect_break(digests, event or self._unreported_event, inp)
            self._unreported_event = None
            points = breakpoints_for(len(messages), len(self._previous_digests))
            self._previous_digests = digests
            wire = apply_markers(messages, points, family)
        with timer.stage("media_resolve") as st:
            if self._media_rows:
                wire = [self.resolver.resolve(m) for m in wire]

        self.stats.assembles += 1
        report = {
            "tokens": tokens,
            "messages": len(messages),
            "budget": {
                "window": budget.window,
                "output_reserve": budget.output_reserve,
                "safety_margin": budget.safety_margin,
                "prompt_limit": budget.prompt_limit,
                "fixed_tokens": fixed,
                "history_tokens": self._history_tokens,
                "utilization": round(tokens / budget.prompt_limit, 4) if budget.prompt_limit else 1.0,
                "usage_ratio": round(self.usage_ratio, 3),
            },
            "ladder": {"tier": decision.tier, "action": decision.why, "deferred": decision.deferred},
            "stages": timer.as_list(),
            "breakers": self.breakers.states(),
            "event": event,
            "cache_break": self.last_break.as_dict() if self.last_break else None,
            "integrity": {
                "orphans_dropped": integrity.orphans_dropped,
                "dangling_repaired": integrity.dangling_repaired,
            },
            "ms": round((time.perf_counter() - started) * 1000, 3),
        }
        return AssembledPrompt(wire, list(inp.tools), tokens, budget, points, report)

    def summarize_now(self, inp: TurnInput) -> dict[str, Any] | None:
        """The user's compact command, its synchronous half: every unit outside the kept tail
        (`_manual_tail_start`) leaves the prompt and becomes summary nodes: the ones a model
        prepared (`prepare_for_compact`, awaited before this by the agent), extractive ones for
        the rest. Anchors stay. Returns the event, or None when there was nothing to summarize."""
        budget = budget_for(inp.model.context_window, inp.max_output_tokens)
        self._sync_rows()
        self._ingest_views(self._take_unfiltered(), budget, inp.model.name)
        self._render((family_of(inp.model.name), inp.model.supports_vision, inp.model.name))
        return self._compaction_event(
            SUMMARIZE,
            budget,
            inp,
            self.clock() if inp.now is None else inp.now,
            trigger=inp.trigger if inp.trigger != "auto" else "manual",
            target_ratio=0.0,
            manual=True,
        )

    def compact(self, inp: TurnInput, tier: str = "full", focus: str | None = None) -> dict[str, Any] | None:
        """Run one ladder tier now over everything outside the fresh tail (no target to stop at);
        `focus` (a path or topic) is spared by the masking. Not the user's compact command
        (`summarize_now`): tests and tools that need a given tier. Returns the event, or None
        when nothing could change."""
        budget = budget_for(inp.model.context_window, inp.max_output_tokens)
        self._sync_rows()
        self._ingest_views(self._take_unfiltered(), budget, inp.model.name)
        self._render((family_of(inp.model.name), inp.model.supports_vision, inp.model.name))
        return self._compaction_event(
            tier,
            budget,
            inp,
            self.clock() if inp.now is None else inp.now,
            trigger=inp.trigger if inp.trigger != "auto" else "manual",
            target_ratio=0.0,
            focus=(focus,) if focus else (),
        )

    def excerpt_of(self, message_id: int) -> View | None:
        """The excerpt the prompt shows instead of message `message_id`, when it was too large to
        send whole (None when the prompt carries it verbatim)."""
        view = self.views.get(message_id)
        return view if view is not None and view.kind == SHRUNK else None

    def call_ids(self) -> Iterable[str]:
        """Tool-call ids already used in this session (as of the last assemble)."""
        return self._calls.keys()

    def replacements(self) -> dict[str, str]:
        """handle → why it is not verbatim in the prompt (for ctx_inspect)."""
        return {msg_handle(mid): f"{v.kind}: {v.reason}" for mid, v in self.views.items()}

    def last_row(self) -> MessageRecord | None:
        """The newest stored message of the session (the agent's resend check reads it). Rows
        read here are filtered at the next assemble like any other new row."""
        self._sync_rows()
        return self.rows[-1] if self.rows else None

    # ------------------------------------------------------------------ rows and rendering
    def _take_unfiltered(self) -> list[MessageRecord]:
        """Rows synced since the smart filter last ran (by `maintain` or `last_row` too, which
        sync without filtering)."""
        rows, self._unfiltered = self._unfiltered, []
        return rows

    def _sync_rows(self) -> list[MessageRecord]:
        after = self.rows[-1].id if self.rows else 0
        new = self.store.messages_after(self.session_id, after) if self.rows else self.store.messages(self.session_id)
        self._unfiltered.extend(new)
        for row in new:
            index = len(self.rows)
            self.rows.append(row)
            for call in row.message.get("tool_calls") or ():
                function = call.get("function", {})
                self._calls[call.get("id", "")] = (function.get("name", ""), parse_arguments(function.get("arguments")))
            if row.role == "user":
                if self._first_user is None:
                    self._first_user = index
            elif row.role == "system":
                self._system_rows.append(index)
            if has_media(row.message):
                self._media_rows.append(index)
        if new:
            previous_last_user = self._last_user
            self._last_user = last_user_index(self.rows)
            # Thinking cleanup depends on "before the latest user message": a new user message
            # changes how the previous turn renders, so re-render from there (the tail only).
            if previous_last_user is not None and self._last_user != previous_last_user:
                self._invalidate_from(previous_last_user)
            # The sliding visual window moved: re-render from the image that fell out of it.
            keep = self.config.media_keep
            new_media = [i for i in self._media_rows if i >= len(self.rows) - len(new)]
            if new_media and len(self._media_rows) > keep:
                fallen = self._media_rows[-keep - 1 : len(self._media_rows) - keep]
                if fallen:
                    self._invalidate_from(fallen[0])
        return new

    def _invalidate_from(self, row_index: int) -> None:
        """Forget the rendering of rows from `row_index` on (and of the synthetic messages
        placed before them); the next `_render` redoes exactly that part."""
        if row_index >= self._rendered_upto:
            return
        position = len(self._entries)
        while position > 0 and self._entries[position - 1].anchor >= row_index:
            position -= 1
        for entry in self._entries[position:]:
            self._history_tokens -= entry.tokens
            if entry.row >= 0:
                self._entry_of_row.pop(entry.row, None)
        del self._entries[position:]
        self._rendered_upto = row_index

    def _render(self, key: tuple[Any, ...]) -> None:
        if key != self._render_key:
            self._entries, self._entry_of_row, self._history_tokens, self._rendered_upto = [], {}, 0, 0
            self._render_key = key
        family, vision, model = key
        synthetic_before: dict[int, list[SyntheticView]] = {}
        for syn in self.synthetic:
            synthetic_before.setdefault(syn.before_id, []).append(syn)
        media_window = set(self._media_rows[-self.config.media_keep :]) if vision else set()
        last_user = self._last_user if self._last_user is not None else -1
        for index in range(self._rendered_upto, len(self.rows)):
            row = self.rows[index]
            for syn in synthetic_before.get(row.id, ()):
                self._entries.append(_Entry(-1, syn.message, syn.tokens, index))
                self._history_tokens += syn.tokens
            view = self.views.get(row.id)
            if view is not None and view.kind == REMOVED:
                continue
            # Only a REMOVED view has no message (skipped above); the original stands in otherwise.
            base = view.message if view is not None and view.message is not None else row.message
            tokens = view.tokens if view is not None else row.tokens
            message = base
            if index in self._media_rows and index not in media_window:
                message = strip_media(message, "model has no vision" if not vision else "older than the newest images")
            message = clean_thinking(message, family, index < last_user)
            message = normalize(message)
            if message is not base and _shape_changed(base, message):
                tokens = count_message_tokens(message, model)
            self._entry_of_row[index] = len(self._entries)
            self._entries.append(_Entry(index, message, tokens, index))
            self._history_tokens += tokens
        self._rendered_upto = len(self.rows)

    def _ingest_views(self, new_rows: Sequence[MessageRecord], budget: Budget, model: str) -> dict[int, View]:
        """Smart filter on arrival: outputs over the per-tool allowance, and any single item
        over `max_item_ratio`, get a real excerpt + handle, decided once."""
        decided: dict[int, View] = {}
        limit = budget.prompt_limit
        calls = self._calls
        for row in new_rows:
            if row.id in self.views:
                continue
            allowance = int(limit * self.config.ingest_filter_ratio)
            if row.role == "tool":
                name, args = calls.get(row.message.get("tool_call_id", ""), (row.message.get("name", ""), {}))
                if name == "file_read":
                    allowance = int(limit * self.config.file_read_filter_ratio)
            else:
                name, args = "", {}
                allowance = int(limit * self.config.max_item_ratio)
            if row.tokens <= allowance:
                continue
            if row.message.get("tool_calls"):
                shrunk = self._shrunk_arguments(row, model)
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
            self.views.update(decided)
            self.view_log.save_views(self.session_id, 0, decided, None)
            # Rows synced (and rendered) by `maintain` before this filter saw them.
            self._invalidate_from(min(self._index_of_id(mid) for mid in decided))
        return decided

    @staticmethod
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

    # ------------------------------------------------------------------ compaction events
    def _cache_warm(self, now: float, model: ModelInfo) -> bool:
        if self.last_call_at is None:
            return False
        if not model.supports_prompt_caching and not model.name.startswith("local/"):
            return False  # no provider cache to protect
        ttl = CACHE_TTL_S.get(provider_of(model.name), CACHE_TTL_S["default"])
        return now - self.last_call_at < ttl

    def _tail_start(self, units: Sequence[Unit], window: int) -> int:
        allowance = int(window * self.config.tail_ratio)
        used = 0
        start = units[-1].start if units else len(self.rows)
        for unit in reversed(units):
            tokens = sum(self._row_tokens(i) for i in range(unit.start, unit.end))
            if used + tokens > allowance and start != unit.start:
                break
            used += tokens
            start = unit.start
        return start

    def _manual_tail_start(self, units: Sequence[Unit], window: int) -> int:
        """What the compact command keeps verbatim: the latest exchange (the latest user message
        and everything after it), never more than the fresh tail. Keeping the whole fresh tail
        (10 % of the window) made the command a no-op on short sessions in large windows: a
        40-turn chat in a 200k window is all tail, and "Nothing to compact" is not what someone
        who pressed compact asked for."""
        start = self._tail_start(units, window)
        if self._last_user is not None:
            start = max(start, self._last_user)
        return start

    def _row_tokens(self, index: int) -> int:
        position = self._entry_of_row.get(index)
        return self._entries[position].tokens if position is not None else 0

    def _valid_history(self, model: str) -> tuple[list[dict[str, Any]], Any, int]:
        """The rendered history made provider-valid, and the token change the repair made
        (synthetic results added, orphans dropped), so the budget check counts what is sent."""
        rendered = [e.message for e in self._entries]
        history, integrity = repair_pairs(rendered)
        delta = 0
        if integrity.dangling_repaired or integrity.orphans_dropped:
            kept = {id(m) for m in history}
            delta -= sum(e.tokens for e in self._entries if id(e.message) not in kept)
            known = {id(e.message) for e in self._entries}
            delta += sum(count_message_tokens(m, model) for m in history if id(m) not in known)
        return history, integrity, delta

    def _fence_index(self) -> int:
        """Row index of the previous event's tail start (restored from the store after a
        restart), or 0 before any event."""
        if self._fence_id is None:
            done = [
                e
                for e in self.store.events(self.session_id, "compaction", limit=4)
                if e.data.get("state") == "done" and e.data.get("tail_start_id")
            ]
            self._fence_id = done[-1].data["tail_start_id"] if done else 0
        return self._index_of_id(self._fence_id) if self._fence_id else 0

    def _live_from(self) -> int:
        """First row index after the human anchor that is not left out. Removal always takes
        the oldest units first, so everything between the anchor and this index is removed."""
        start = (self._first_user + 1) if self._first_user is not None else 0
        i = max(start, self._live_hint)
        while i < len(self.rows):
            view = self.views.get(self.rows[i].id)
            if view is None or view.kind != REMOVED:
                break
            i += 1
        self._live_hint = i
        return i

    def _compaction_event(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        """One compaction event, written as one store transaction (event record, views,
        summary nodes): one fsync instead of a dozen, and a crash leaves all of it or none."""
        batch = getattr(self.store, "batch", None)
        with batch() if batch is not None else contextlib.nullcontext():
            return self._compaction_event_in_batch(*args, **kwargs)

    def _compaction_event_in_batch(
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
    ) -> dict[str, Any] | None:
        """`floor`: the last preflight pass (anchors may shrink to pointers); `overhead`: tokens
        the integrity repair adds to the prompt, kept free when sizing the summary area;
        `manual`: the compact command's smaller kept tail."""
        started = time.perf_counter()
        fixed = fixed_tokens(inp.system_prompt, tuple(inp.tools) and tools_key(inp.tools), inp.model.name)
        before = fixed + self._history_tokens
        hook = self.pre_compact
        if hook is not None:
            self.breakers.run("pre_compact", lambda: hook({"tier": tier, "tokens": before}), None)
        event_record = self.store.append_event(
            self.session_id,
            "compaction",
            {"tier": tier, "trigger": trigger, "tokens_before": before, "state": "started"},
        )
        plan_input = self._plan_input(
            tier,
            budget,
            inp,
            before,
            event_id=event_record.id,
            target_ratio=target_ratio,
            focus=focus,
            no_tail=no_tail,
            manual=manual,
        )
        tail_start, protected = plan_input.tail_start, plan_input.protected
        plan = plan_compaction(plan_input)
        if floor:
            self._point_anchors(plan, protected - {self._last_user}, inp.model.name, event_record.id)
        # The room left for synthetic messages (summaries, reread) once the plan is applied: the
        # summary area gets its share of B, but never more than fits (a tight window, a large
        # fixed prefix), else removal would only trade messages for summaries that do not fit.
        synthetic_now = sum(s.tokens for s in self.synthetic)
        room = budget.prompt_limit - (plan.total - synthetic_now) - overhead
        if not plan.views and synthetic_now <= room:
            self.stats.tier_savings.setdefault(tier, []).append(0)
            return None
        self.views.update(plan.views)
        changed = sorted(self._index_of_id(mid) for mid in plan.views)
        synthetic = self._rebuild_synthetic(event_record.id, inp.model.name, tail_start, budget, changed, room=room)
        if not changed and synthetic == self.synthetic:
            self.stats.tier_savings.setdefault(tier, []).append(0)
            return None
        self.view_log.save_views(self.session_id, event_record.id, plan.views, synthetic)
        # Only synthetic messages that appear or disappear move the prompt; kept ones are the
        # same objects, byte-identical.
        moved = [s for s in synthetic if s not in self.synthetic] + [s for s in self.synthetic if s not in synthetic]
        self.synthetic = synthetic
        first = min([*changed[:1], *[self._index_of_id(s.before_id) for s in moved]])
        self._invalidate_from(first)
        self._render(self._render_key or (family_of(inp.model.name), inp.model.supports_vision, inp.model.name))
        after = fixed + self._history_tokens
        self.stats.events += 1
        self.stats.tier_savings.setdefault(tier, []).append(before - after)
        self._fence_id = self.rows[tail_start].id if tail_start < len(self.rows) else None
        created: dict[str, int] = {}
        fallbacks = 0
        for view in moved:
            if view.kind == SUMMARY_KIND and view in synthetic and view.handle:
                node = self.store.get_summary(self.session_id, view.handle)
                if node is not None:
                    created[str(node["depth"])] = created.get(str(node["depth"]), 0) + 1
                    fallbacks += int(node["fallback"])
        briefs = sum(1 for view in synthetic if view.kind == SUMMARY_BRIEF_KIND)  # shown in one line
        event = {
            "id": event_record.id,
            "tier": tier,
            "trigger": trigger,
            "tokens_before": before,
            "summaries": {"created_by_depth": created, "fallback": fallbacks, "brief": briefs},
            "tokens_after": after,
            "saved": before - after,
            "items": len(plan.views),
            "ops": plan.ops,
            "tail_start_id": self.rows[tail_start].id if tail_start < len(self.rows) else None,
            "first_changed_id": self.rows[first].id if first < len(self.rows) else None,
            "ms": round((time.perf_counter() - started) * 1000, 3),
        }
        self.store.append_event(self.session_id, "compaction", {**event, "state": "done"})
        self._unreported_event = event
        return event

    def _plan_input(
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
    ) -> PlanInput:
        """What the planner is given for one event (also for the dry run of `rows_removed_next`)."""
        live = self._live_from()
        units = split_units(self.rows, live)
        if no_tail:
            tail_start = len(self.rows)
        else:
            tail_start = (
                self._manual_tail_start(units, budget.window) if manual else self._tail_start(units, budget.window)
            )
        protected = frozenset(i for i in (self._first_user, self._last_user) if i is not None)
        protected |= frozenset(self._system_rows)
        if target_ratio is None:  # the last resort inside the fresh tail cuts as little as it can
            deep = tier == EMERGENCY and not no_tail
            target_ratio = self.config.emergency_target_ratio if deep else self.config.target_ratio
        return PlanInput(
            rows=self.rows,
            units=units,
            views=self.views,
            row_tokens=_TokenView(self),
            total=total,
            target=int(budget.prompt_limit * target_ratio),
            tier=tier,
            protected=protected,
            tail_start=tail_start,
            last_user=self._last_user if self._last_user is not None else -1,
            intent=build_intent(self.rows, self._last_user, pinned=focus),
            budget=budget.prompt_limit,
            light_filter_tokens=max(200, int(budget.prompt_limit * self.config.light_filter_ratio)),
            count=lambda m: count_message_tokens(m, inp.model.name),
            calls=self._calls,
            start=live,
            fence=self._fence_index(),
            removal_target=int(budget.prompt_limit * self.config.removal_target_ratio),
            event_id=event_id,
            blocks=self._prepared_blocks(),
            removal_end=units[-1].start if no_tail and units else None,
        )

    def rows_removed_next(self, inp: TurnInput, *, if_emergency_now: bool = False) -> list[int]:
        """Row indices the next `assemble` would remove, by a dry run of its ladder decision and
        the emergency plan (nothing is stored or changed but the arrival filter, which the next
        assemble would run the same way). Empty when it would remove nothing: an emergency that
        masking alone satisfies removes no turn, and a summary written for it would wait unused.
        `if_emergency_now`: what an emergency would remove now, whatever the ladder says (the
        oldest of these rows are what the next removal takes, whenever it comes)."""
        budget = budget_for(inp.model.context_window, inp.max_output_tokens)
        self._sync_rows()
        self._ingest_views(self._take_unfiltered(), budget, inp.model.name)
        self._render((family_of(inp.model.name), inp.model.supports_vision, inp.model.name))
        now = self.clock() if inp.now is None else inp.now
        total = (
            fixed_tokens(inp.system_prompt, tuple(inp.tools) and tools_key(inp.tools), inp.model.name)
            + self._history_tokens
        )
        decision = ladder.decide(
            tokens=int(total * self.usage_ratio),
            budget=budget,
            config=self.config,
            cache_warm=self._cache_warm(now, inp.model),
            force_tier=None,
            recent_savings=self.stats.tier_savings,
        )
        if decision.run != EMERGENCY and not if_emergency_now:
            return []
        plan = plan_compaction(self._plan_input(EMERGENCY, budget, inp, total, event_id=0))
        return sorted(self._index_of_id(mid) for mid, view in plan.views.items() if view.kind == REMOVED)

    def _point_anchors(self, plan: Any, rows: Iterable[int], model: str, event_id: int) -> None:
        """The floor's last reduction: the human anchor (and stored system rows) shrink to a
        one-line pointer with their handle, when that is smaller. Only the latest user message
        is never reduced further: it is what the turn answers."""
        for index in sorted(rows):
            row = self.rows[index]
            current = self._row_tokens(index)
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

    def _index_of_id(self, message_id: int) -> int:
        # Rows are ordered by id; bisect keeps this O(log n).
        lo, hi = 0, len(self.rows)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.rows[mid].id < message_id:
                lo = mid + 1
            else:
                hi = mid
        return lo

    # ------------------------------------------------------------------ cache-break detection
    def _system_digest(self, system_prompt: str) -> str:
        if self._system_key != system_prompt:
            self._system_key = system_prompt
            self._system_hash = message_digest({"role": "system", "content": system_prompt})
        return self._system_hash

    def _history_digests(self, history: list[dict[str, Any]]) -> list[str]:
        """Digest per prompt message; entries carry theirs, so only repaired messages hash anew."""
        by_identity = {id(e.message): e for e in self._entries}
        out = []
        for message in history:
            entry = by_identity.get(id(message))
            if entry is None:
                out.append(message_digest(message))
                continue
            if not entry.digest:
                entry.digest = message_digest(message)
            out.append(entry.digest)
        return out

    def _detect_break(self, digests: list[str], event: dict[str, Any] | None, inp: TurnInput) -> CacheBreak | None:
        previous = self._previous_digests
        if not previous:
            return None
        position = first_difference(previous, digests)
        if position is None:
            return None
        if position == 0:
            reason = "system prompt changed (settings or model switch)"
        elif event is not None:
            reason = f"compaction ({event['tier']}, {event['trigger']})"
        else:
            reason = "history re-rendered (new turn changed reasoning/media of the previous one)"
        return CacheBreak(position, len(previous), reason, 0)


# ---------------------------------------------------------------------- helpers


def _shape_changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
    keys = ("content", "tool_calls", "reasoning_content", "thinking_blocks")
    return any(before.get(k) != after.get(k) for k in keys)


__all__ = ["UNTRUSTED_OPEN", "ContextEngine", "TurnInput"]
