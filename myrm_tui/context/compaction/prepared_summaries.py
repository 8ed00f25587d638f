"""Summaries written by a model before the event that needs them.

Why apart from the event: a compaction event is synchronous and never waits for a model (the
prompt must be built now). So whatever a model writes is prepared ahead, stored as a node with
status `prepared`, and activated by the event whose removal (or fold) covers exactly what it
stands for. Three callers, one mechanism:

- `maintain`: idle time in the TUI, and between steps of a turn (agent), once the prompt passes
  the full threshold: the next chunk that removal will take, else the next fold.
- `prepare_for_compact`: the user's compact command, before its event: every chunk outside the
  kept tail, then the folds those leaves will make, with the user's focus in the prompt.
- `chunks_before_removal` + `prepare_chunks`: when the user allows the wait (`summary_wait`),
  right before an emergency removes history: the chunks it is about to take.

Every model call goes down the summarizer chain (`summary.client.summarize_with`: the lite model,
then the main model, then the extractive body), so a failing lite model does not leave the
session with extractive summaries while the main model could write them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from myrm_tui.context.compaction.compactor import Compactor
from myrm_tui.context.compaction.dag import EXTRACTIVE_MODEL, SUMMARY_KINDS, SummaryDag
from myrm_tui.context.compaction.summary_area import SummaryArea
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.observations.fact_context import FactContext, kept_lines
from myrm_tui.context.rows.units import split_units
from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.tokens import count_message_tokens, count_text_tokens
from myrm_tui.context.window.turn_input import TurnInput
from myrm_tui.store.event_kinds import SUMMARY
from myrm_tui.store.records import MessageRecord

if TYPE_CHECKING:
    # Loaded with the first summary (the summarizer's modules are not needed to start the app).
    from myrm_tui.context.summary.breaker import SummarizerBreaker
    from myrm_tui.context.summary.chunking import Chunk
    from myrm_tui.context.summary.client import SummarizerCall, SummaryModel
    from myrm_tui.llm.call_settings import CallSettings

# Between steps and after turns, a chunk smaller than this share of a full summarizer chunk
# waits to grow (unless the very next request removes it): measured in bench/summary_timing.py.
MIN_CHUNK_FILL = 0.5
# Same-depth fold rounds a preparation looks ahead (the event folds at most this many rounds).
FOLD_LOOKAHEAD_ROUNDS = 8
# Prepare for an economic event once half of its read allowance is spent (about 70 % of the
# interval: the allowance grows with the square of the turns), well before the event. Measured on
# the chatty 64k replay, whose fake summaries the auditor always rejects: 297k summarizer tokens
# at 0.5, 348k at 0.9 (the spend is per chunk, not per turn waited), 0 without preparing.
ECONOMIC_PREPARE_AT = 0.5


@dataclass(frozen=True)
class PrepareProgress:
    """Where a multi-call preparation is (the compact command's progress line)."""

    done: int  # summaries written so far
    total: int  # summaries planned (folds are only known once their leaves exist)
    what: str  # "leaf" or "fold"


ProgressFn = Callable[[PrepareProgress], None]


class SummaryPreparation:
    """The model-written summaries ahead of the events that use them (see the module's docstring).

    Why it takes the engine's lock: these entry points are coroutines that wait for a model, and
    a compaction (the compact command, a turn's assemble) may run meanwhile. They read and write
    engine state only under `lock`, and never hold it across an await: the model call works on
    row copies, and what it wrote is stored as a prepared node (by row ids, which never move), so
    an event that ran in between only means the node waits for the next removal.
    """

    def __init__(
        self,
        history: RenderedHistory,
        summaries: SummaryArea,
        compactor: Compactor,
        dag: SummaryDag,
        lock: AbstractContextManager[Any],
        removed_next: Callable[..., list[int]],
        settle: Callable[[], object] = lambda: None,
    ):
        self.history = history
        self.summaries = summaries
        self.compactor = compactor
        self.dag = dag
        self.config = history.config
        self.store = history.store
        self.session_id = history.session_id
        self._lock = lock
        self._removed_next = removed_next  # the engine's `rows_removed_next`
        # The engine's `_pay_owed`: an event the last request owes runs before new rows are read.
        self._settle = settle
        self._failed_folds: set[tuple[str, ...]] = set()  # children a model could not fold (not asked again)

    # ------------------------------------------------------------------ entry points
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
        """One piece of idle-time work (after a turn, or between two steps of one): once the
        prompt passes the full threshold, have a model summarize the next chunk that will be left
        out, else write the next fold. When removal comes, the summary is ready and nothing waits
        for a model. `models`: the summarizer chain (`model`/`window`/`call`/`settings`: a chain
        of one). Never raises for model failures."""
        from myrm_tui.context.summary.routing import MIN_USEFUL_CHUNK_TOKENS

        chain = _chain(models, model, window, call, settings)
        if not chain:
            return None
        with self._lock:
            budget = self.ready(inp)
            # Prepare only once the full tier is reached: removal is then near, so the paid summary
            # is very likely to be used (below it, sessions often end before anything is removed).
            # Or once an economic event (compaction_interval.py) is half-way due: it runs below full.
            near = self.compactor.economic_progress(budget) >= ECONOMIC_PREPARE_AT
            if self.prompt_tokens(inp) < budget.prompt_limit * self.config.full_ratio and not near:
                return None
            # The oldest chunk of what an emergency would remove now: removal takes the oldest units
            # first, so that is what the next removal takes, whenever it comes. (Summarizing "the
            # oldest units outside the tail" instead paid, between steps, for a chunk of the one or
            # two units added since the last step, a call each: 50 calls where 22 cover as much,
            # bench/summary_timing.py.) Nothing when masking alone would do: no removal is near.
            # Near an economic event, the chunk that event removes (its own floor and tail): it comes
            # at a known time, so a chunk smaller than a full one is not worth waiting on.
            chunks = self._removal_chunks(self._removed_next(inp, if_emergency_now=True, economic=near), chain)
            full = min(_full_chunk(chain), budget.prompt_limit)  # a small window's removals are small too
            # A chunk below the smallest one worth a call is left to the event's extractive body,
            # even near an event: the request's fixed part (~1.4k tokens of instructions) costs
            # more than such a chunk, and a 14-field summary of a question and a short reply is
            # hardly smaller than them (rejected as such, and asked again). Measured on chatty-400
            # at 32k with `oracle`: 19 leaf calls instead of 39, summarizer tokens 208k -> 157k.
            floor = min(MIN_USEFUL_CHUNK_TOKENS, full * MIN_CHUNK_FILL)
            chunk = next((c for c in chunks if c.tokens >= floor), None)
            if chunk is not None and chunk.tokens < full * MIN_CHUNK_FILL and not near and not self._removed_next(inp):
                chunk = None  # a small chunk now would cost a call that a later, fuller one saves
            rows = self.history.rows[chunk.start : chunk.end] if chunk is not None else None
            # In a slow chat (the economic trigger's gate open) whose summaries a model writes, no
            # model fold in the background while the summary area is over its pressure line: each
            # event adds a leaf, the event folds it in pairs and the next event folds the result
            # again, so a call per pair bought a node that lived an event or two; merged without a
            # model it costs nothing. Measured on chatty-400 `oracle` (docs/benchmarks.md, "Chat
            # cost"): 32k 42 -> 17 summarizer calls, 181k -> 102k tokens, R_verbatim 0.939 -> 0.944.
            # Tool-heavy sessions keep their model folds (coding-400 32k `oracle`: R_verbatim 0.708
            # with them, 0.646 without), and so do sessions whose model fails (`null`: its refused
            # folds are what the summarizer breaker counts). The compact command (the user is
            # waiting for it) has the model write every fold.
            chat = self.config.economic_trigger and self.compactor.interval.slow()
            chat = chat and self.dag.model_written()
            fold = self._next_fold(budget, under_pressure=not chat) if chunk is None else None
        if rows is not None:
            record = await self._prepare_leaf(inp, budget, rows, chain, breaker, kind="prepare")
        else:
            if fold is None:
                return None
            record = await self._prepare_fold(inp, budget, fold[0], fold[1], chain, breaker)
        # Nothing was asked (every model's breaker open): no work was done, nothing to report.
        return record if record["attempts"] or not record["fallback"] else None

    async def prepare_for_compact(
        self,
        inp: TurnInput,
        *,
        models: Sequence[SummaryModel],
        breaker: SummarizerBreaker | None = None,
        focus: str | None = None,
        progress: ProgressFn | None = None,
    ) -> list[dict[str, Any]]:
        """The compact command's model work, before its event (`summarize_now`): a summary for
        every chunk outside the kept tail, then the folds these leaves will make. Cancelling
        (the task) keeps what is written: prepared nodes wait for the next removal."""
        from myrm_tui.context.summary.chunking import chunks_between

        chain = list(models)
        if not chain:
            return []
        with self._lock:
            budget = self.ready(inp)
            live = self.history.live_from()
            end = self.compactor.manual_tail_start(split_units(self.history.rows, live), budget.window)
            chunks = chunks_between(
                self.history.rows,
                start=live,
                end=end,
                barriers=self.history.never_removed(),
                blocks=self.summaries.prepared_blocks(),
                summarizer_window=_window(chain),
            )
            pieces = [self.history.rows[chunk.start : chunk.end] for chunk in chunks]
        records = []
        for i, rows in enumerate(pieces):
            _report(progress, i, len(pieces), "leaf")
            records.append(await self._prepare_leaf(inp, budget, rows, chain, breaker, kind="compact", focus=focus))
        records += await self.prepare_folds(
            inp, models=chain, breaker=breaker, focus=focus, progress=progress, done=len(records)
        )
        _report(progress, len(records), len(records), "done")
        return records

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
        """The folds the next event will make with the nodes that exist and the leaves prepared
        for it, written by the model now (after the leaves of the compact command or of
        `summary_wait`, which the user is waiting for anyway)."""
        chain = _chain(models, None, 0, None, None)
        if not chain:
            return []
        budget = self.ready(inp)
        records: list[dict[str, Any]] = []
        for _ in range(FOLD_LOOKAHEAD_ROUNDS):
            with self._lock:
                fold = self._next_fold(budget)
            if fold is None:
                break
            _report(progress, done + len(records), done + len(records) + 1, "fold")
            record = await self._prepare_fold(inp, budget, fold[0], fold[1], chain, breaker, focus=focus)
            records.append(record)
            if record.get("fallback"):
                break
        return records

    def chunks_before_removal(self, inp: TurnInput, models: Sequence[SummaryModel]) -> list[Chunk]:
        """The chunks the next request's emergency is about to remove that no model has
        summarized yet (a dry run of its plan: `rows_removed_next`), cut at what is already
        prepared. Empty when no removal is ahead. The caller then waits for `prepare_chunks`
        (the user allowed it: `summary_wait`)."""
        chain = _chain(models, None, 0, None, None)
        if not chain:
            return []
        with self._lock:
            return self._removal_chunks(self._removed_next(inp), chain)

    def _removal_chunks(self, removed: Sequence[int], chain: Sequence[SummaryModel]) -> list[Chunk]:
        """`removed` (row indices, ascending) as summarizer chunks, cut at prepared ranges."""
        from myrm_tui.context.summary.chunking import chunks_between

        runs: list[list[int]] = []
        for i in removed:
            if runs and i == runs[-1][-1] + 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        blocks, barriers, window = self.summaries.prepared_blocks(), self.history.never_removed(), _window(chain)
        return [
            chunk
            for run in runs
            for chunk in chunks_between(
                self.history.rows,
                start=run[0],
                end=run[-1] + 1,
                barriers=barriers,
                blocks=blocks,
                summarizer_window=window,
            )
        ]

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
        """A model summary for each of `chunks` (row ranges), stored as prepared nodes."""
        chain = _chain(models, None, 0, None, None)
        if not chain:
            return []
        with self._lock:
            budget = self.ready(inp)
            pieces = [self.history.rows[chunk.start : chunk.end] for chunk in chunks]
        records = []
        for i, rows in enumerate(pieces):
            _report(progress, i, len(pieces), "leaf")
            records.append(await self._prepare_leaf(inp, budget, rows, chain, breaker, kind=kind))
        return records

    # ------------------------------------------------------------------ the work
    async def _prepare_leaf(
        self,
        inp: TurnInput,
        budget: Budget,
        rows: Sequence[MessageRecord],
        chain: Sequence[Any],
        breaker: Any,
        *,
        kind: str,
        focus: str | None = None,
    ) -> dict[str, Any]:
        from myrm_tui.context.summary.client import summarize_with
        from myrm_tui.context.summary.source import summarizer_messages

        outcome = await summarize_with(
            chain,
            summarizer_messages([r.message for r in rows]),
            ids=[r.id for r in rows],
            focus=focus,
            breaker=breaker,
            session_id=self.session_id,
        )
        record = _record(kind, outcome, chain)
        record.update(first_id=rows[0].id, last_id=rows[-1].id)
        # A chunk the model was asked about is settled either way: its answer, or (rejected or
        # failed) the extractive summary. Leaving a failed chunk unprepared made the next idle
        # step pay for the same rejected chunk again, after every turn (4 calls each time).
        # A breaker-open skip (no call made) stays unprepared so a later probe can still try.
        with self._lock:
            if not outcome.fallback or outcome.attempts:
                content = outcome.summary
                if outcome.fallback:
                    # The model was sent excerpts of the outputs; the extractive body is made from
                    # the stored rows, as the event's own would be: what the outputs said in full,
                    # and the lines the conversation named or a later run changed.
                    first = self.history.index_of_id(rows[0].id)
                    content = self.dag.extractive(
                        rows,
                        lambda text: count_text_tokens(text, inp.model.name),
                        max_tokens=self.summaries.max_node_tokens(budget),
                        kept=kept_lines(
                            FactContext(self.history.rows, index=self.history.facts), range(first, first + len(rows))
                        ),
                    )
                node = self.dag.prepare(
                    rows,
                    content,
                    lambda m: count_message_tokens(m, inp.model.name),
                    model=outcome.model if not outcome.fallback else EXTRACTIVE_MODEL,
                    quote_tokens=(
                        self.summaries.quote_tokens(budget)
                        if outcome.fallback
                        else self.summaries.model_quote_tokens(budget)
                    ),
                )
                record["handle"] = node["handle"]
            self.store.append_event(self.session_id, SUMMARY, record)
        return record

    async def _prepare_fold(
        self,
        inp: TurnInput,
        budget: Budget,
        children: list[dict[str, Any]],
        depth: int,
        chain: Sequence[Any],
        breaker: Any,
        *,
        focus: str | None = None,
    ) -> dict[str, Any]:
        """A condensed node written by a model from its children's bodies, with the prompt of
        its depth (timeline, trajectory, durable memory). Only an accepted answer is stored: a
        fold without one merges the children's fields at the event, as it always could, and the
        same children are not offered to the model again in this process."""
        from myrm_tui.context.compaction.dag import from_json_dict
        from myrm_tui.context.summary.client import summarize_with
        from myrm_tui.context.summary.prompts import condense_messages
        from myrm_tui.context.summary.schema import body_text

        handles = tuple(c["handle"] for c in children)
        # The children's fields only: their headers, footers and quotes are stored columns and
        # verbatim lines the fold carries itself (`node_footer.fold_footer`); sent to the model they
        # only cost tokens and look like identifiers to the auditor.
        bodies = [
            f"Summary {c['handle']} (msg:{c['first_id']} … msg:{c['last_id']}):\n"
            f"{body_text(from_json_dict(c['content']))}"
            for c in children
        ]
        outcome = await summarize_with(
            chain,
            condense_messages(bodies),
            depth=depth,
            focus=focus,
            breaker=breaker,
            session_id=self.session_id,
            source_tokens=sum(int(c["tokens"]) for c in children),
        )
        record = _record("fold", outcome, chain)
        record.update(
            first_id=children[0]["first_id"], last_id=children[-1]["last_id"], children=list(handles), depth=depth
        )
        with self._lock:
            if outcome.fallback:
                if outcome.attempts:  # asked and failed (a breaker-open skip may try again later)
                    self._failed_folds.add(handles)
            else:
                node = self.dag.prepare_fold(
                    children,
                    depth,
                    outcome.summary,
                    lambda m: count_message_tokens(m, inp.model.name),
                    model=outcome.model,
                    quote_tokens=self.summaries.model_quote_tokens(budget),
                    max_tokens=self.summaries.max_node_tokens(budget),
                )
                record["handle"] = node["handle"]
            self.store.append_event(self.session_id, SUMMARY, record)
        return record

    def _next_fold(self, budget: Budget, *, under_pressure: bool = True) -> tuple[list[dict[str, Any]], int] | None:
        """The next same-depth fold an event will make with the nodes that exist (active, and
        prepared leaves about to be activated) and that no model has written yet: (children,
        depth). Runs the event's fold rule (`condense.find_fold_run`, pressure from the summary
        area's share of B), substituting folds already prepared, so the event finds them.
        `under_pressure` False: none while the summary area is over its pressure line (see
        `maintain`)."""
        from myrm_tui.context.summary.condense import SummaryNode, find_fold_run

        nodes: list[tuple[SummaryNode, dict[str, Any]]] = []
        live = self.history.live_from()
        for view in self.history.synthetic:
            if view.kind in SUMMARY_KINDS and view.handle:
                node = self.store.get_summary(self.session_id, view.handle)
                if node is not None:
                    nodes.append((self._summary_node(node, view.tokens), node))
        for node in self.store.summaries(self.session_id, status="prepared"):
            if not node["children"] and self.history.index_of_id(node["first_id"]) >= live:
                nodes.append((self._summary_node(node, int(node["tokens"])), node))
        nodes.sort(key=lambda pair: pair[0].start)
        pressure_at = budget.prompt_limit * self.config.marker_cap_ratio
        for _ in range(FOLD_LOOKAHEAD_ROUNDS):
            pressure = sum(n.tokens for n, _ in nodes) > pressure_at
            if pressure and not under_pressure:
                return None
            run = find_fold_run([n for n, _ in nodes], pressure=pressure)
            if run is None:
                return None
            handles = [n.id for n in run.nodes]
            prepared = self.dag.prepared_fold(handles)
            if prepared is None:
                if tuple(handles) in self._failed_folds:
                    return None
                by_handle = {n.id: node for n, node in nodes}
                return [by_handle[h] for h in handles], run.depth
            taken = set(prepared["children"])
            at = next(i for i, (n, _) in enumerate(nodes) if n.id in taken)
            nodes = [pair for pair in nodes if pair[0].id not in taken]
            nodes.insert(at, (self._summary_node(prepared, int(prepared["tokens"])), prepared))
        return None

    # ------------------------------------------------------------------ helpers
    def ready(self, inp: TurnInput) -> Budget:
        """The rows synced and rendered (not filtered: the next assemble does that), under the lock."""
        with self._lock:
            self._settle()
            self.history.use_anchor_turns(inp.prefix_anchor_turns)
            self.history.use_thinking_keep(inp.thinking_keep_turns)
            self.history.sync()
            self.history.render(inp.render_key())
        return inp.budget()

    def prompt_tokens(self, inp: TurnInput) -> int:
        return inp.fixed_tokens() + self.history.tokens

    def _summary_node(self, node: dict[str, Any], tokens: int) -> Any:
        from myrm_tui.context.summary.condense import SummaryNode

        return SummaryNode(
            node["handle"],
            int(node["depth"]),
            self.history.index_of_id(node["first_id"]),
            self.history.index_of_id(node["last_id"]) + 1,
            tokens,
        )


def _chain(
    models: Sequence[SummaryModel] | None,
    model: str | None,
    window: int,
    call: SummarizerCall | None,
    settings: CallSettings | None,
) -> list[SummaryModel]:
    from myrm_tui.context.summary.client import SummaryModel

    if models is not None:
        return [m for m in models if m.model is not None or m.call is not None]
    if model is None and call is None:
        return []
    return [SummaryModel(model, window, settings, call)]


def _full_chunk(chain: Sequence[Any]) -> int:
    from myrm_tui.context.summary.chunking import chunk_cap

    return chunk_cap(_window(chain))


def _window(chain: Sequence[Any]) -> int:
    """The window every model of the chain can take (a chunk is offered to each in turn)."""
    return min(int(m.window) for m in chain)


def _record(kind: str, outcome: Any, chain: Sequence[Any]) -> dict[str, Any]:
    return {
        "kind": kind,
        "model": outcome.model or (chain[0].model or "injected"),
        "chain": [m.model or "injected" for m in chain],
        "level": outcome.level,
        "attempts": outcome.attempts,
        "fallback": outcome.fallback,
        "tokens_in": outcome.tokens_in,
        "tokens_out": outcome.tokens_out,
        "cost": outcome.cost,
        "errors": outcome.errors[-3:],
        "warning": outcome.warning,
    }


def _report(progress: ProgressFn | None, done: int, total: int, what: str) -> None:
    if progress is not None:
        progress(PrepareProgress(done, total, what))
