"""Stage 6, compress: one batch of reversible reductions, cheapest and least valuable first.

Order: dedup → superseded → filter big outputs (light) → mask outputs by priority and shrink
huge arguments (full) → remove whole units oldest first (emergency). Each step stops as soon as
the prompt is under the target, so an event changes as little as it must. Priority alone is not
enough (it would drop a fresh low-priority output before a stale one): within a priority bucket
the oldest goes first, and the fresh tail is never a candidate.

Every step before removal consults the compression intent (context/observations/intent.py): rows that carry
focus content (a path, module or symbol of the current query, a failed call) come after every
other candidate of the same step, so they are only touched when nothing else is left. For a model without a
prompt cache, removal ranks the candidates by BM25 relevance to the query instead of by age
(context/observations/relevance_policy.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from myrm_tui.context.filters import filter_output
from myrm_tui.context.filters.kept_facts import kept_facts
from myrm_tui.context.observations.argument_cuts import shrunk_call_arguments
from myrm_tui.context.observations.fact_context import FactContext
from myrm_tui.context.observations.fact_index import FactIndex
from myrm_tui.context.observations.file_protection import current_reads
from myrm_tui.context.observations.intent import (
    Intent,
    compaction_text,
    current_query,
    focus_last_in_band,
    looks_failed,
)
from myrm_tui.context.observations.masker_tiers import ALWAYS_PROTECTED, drop_ephemeral, user_turns_after
from myrm_tui.context.observations.relevance import least_relevant_first
from myrm_tui.context.observations.relevance_policy import RECENCY
from myrm_tui.context.rows.units import Unit
from myrm_tui.context.rows.views import (
    DEDUP,
    FILTERED,
    MASKED,
    REMOVED,
    SHRUNK,
    SUPERSEDED,
    VERBATIM,
    View,
    filtered_header,
    masked_text,
    msg_handle,
    pointer_text,
    tool_identity,
)
from myrm_tui.settings.sections.output_filters import FilterSpec
from myrm_tui.store.records import MessageRecord

LIGHT, FULL, EMERGENCY = "light", "full", "emergency"
TIERS = (LIGHT, FULL, EMERGENCY)
# The user's compact command: every unit outside the kept tail leaves for summary nodes (no
# masking first, no target to stop at: the user asked for summaries, not for a smaller prompt).
SUMMARIZE = "summarize"
# Outputs shorter than this are not worth a pointer (the pointer itself is ~40 tokens).
MIN_DEDUP_CHARS = 400
# Tools whose old outputs are cheap to get again and rarely needed verbatim: masked first.
READ_ONLY_TOOLS = frozenset({"file_read", "grep", "glob", "ctx_search", "ctx_expand", "ctx_inspect"})
PROTECTED_TOOLS = ALWAYS_PROTECTED  # plus the `protected_tools` setting (PlanInput.protected_tools)
# How much of a row the intent check and the relevance ranking read: enough for a file's head
# or a log's first screens, and a 100k-character output costs no more than this.
INTENT_CHARS = 4_000
RELEVANCE_CHARS = 20_000
# `steps_newest_first` sizes each chunk of groups by the share of their tokens the steps left in
# the chunk before; a chunk too small costs another pass of every step, one too large only visits
# groups removal takes anyway. At least this share, so a chunk of masked stubs does not predict
# that the next chunk is near nothing and ask for the whole history.
MIN_KEPT_SHARE = 0.05
# The guess before any group was visited (a masked output keeps a stub, its call stays): a guess
# too high costs another chunk, one too low only visits groups removal takes anyway. Exactness
# does not depend on either constant, only the planner's time.
FIRST_KEPT_SHARE = 0.25


class RowTokens(Protocol):
    """Tokens by row index: a list, or the engine's lazy view (the planner only indexes it, and
    computing every row up front would cost what the laziness saves)."""

    def __getitem__(self, index: int, /) -> int: ...


@dataclass
class PlanInput:
    rows: Sequence[MessageRecord]
    units: Sequence[Unit]
    views: Mapping[int, View]  # message id → current view (absent = verbatim)
    row_tokens: RowTokens  # current prompt tokens of each row (0 when removed)
    total: int
    target: int
    tier: str
    protected: frozenset[int]  # row indices never touched (anchors)
    tail_start: int  # rows at or after this index are the fresh tail
    last_user: int  # index of the latest user message (outputs after it are the active task)
    intent: Intent
    budget: int
    light_filter_tokens: int
    count: Callable[[dict[str, Any]], int]
    calls: Mapping[str, tuple[str, dict[str, Any]]]  # tool_call_id → (name, arguments)
    start: int = 0  # rows before this index are already left out (the planner never looks back)
    fence: int = 0  # the previous event's boundary: the first pass only changes rows from here on
    removal_target: int | None = None  # once removal is needed, remove down to this (fewer, bigger events)
    # Row ranges a model already summarized in the background (start index → end, exclusive):
    # removal takes such a range whole, so its prepared summary can stand for it.
    blocks: Mapping[int, int] = dataclasses.field(default_factory=dict)
    event_id: int = 0
    # Units ending after this index are never removed (None: the tail start). The passes inside
    # the fresh tail keep the newest unit: a removed run needs a later message to carry its
    # summary, and the model needs the result it is answering.
    removal_end: int | None = None
    # RECENCY: removal takes the oldest units first (the cached prefix is cut once); RELEVANCE:
    # the least relevant to the current query first (a model without a prompt cache).
    eviction: str = RECENCY
    # Tools whose outputs are never masked, filtered or superseded (context/observations/masker_tiers.py).
    protected_tools: frozenset[str] = ALWAYS_PROTECTED
    # Removal defers focus groups within bands of this many (intent.py:focus_last_in_band); 0: off.
    focus_band: int = 0
    # The age windows (EngineConfig.eviction_min_age, observation_keep_window): outputs younger
    # than this many user turns, and the newest this many outputs, are left alone below the
    # emergency's own steps.
    eviction_min_age: int = 0
    observation_keep: int = 0
    # File reads and edits protected (context/observations/file_protection.py): current reads, newest first, up
    # to this many tokens in all are never excerpted or masked below the emergency's own steps;
    # edit arguments keep this many characters (0: the plain cut, argument_cuts.ARG_KEEP_CHARS).
    file_protect_tokens: int = 0
    edit_keep_chars: int = 0
    # The engine's facts index over `rows` (None: the planner scans the rows itself).
    facts: FactIndex | None = None
    output_filters: tuple[FilterSpec, ...] = ()  # the session's (TurnInput.output_filters), for excerpts
    # The emergency's steps skip the rows removal is certain to take (`_Planner.steps_newest_first`);
    # False: every row, in the steps' own order (the reference the tests compare with).
    newest_first: bool = True


@dataclass(frozen=True)
class RemovalGroup:
    """What removal takes at once: one unit, or every unit of a background-summarized block.
    `block`: it starts such a block (oldest-first removal takes it even once under target, as it
    always has, so its prepared summary can stand for it)."""

    units: tuple[Unit, ...]
    block: bool


@dataclass
class Plan:
    views: dict[int, View] = field(default_factory=dict)
    saved: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    total: int = 0


class _Planner:
    def __init__(self, inp: PlanInput):
        self.inp = inp
        self.plan = Plan(total=inp.total)
        self.tokens: dict[int, int] = {}  # row index → tokens after this plan's changes
        self._base_tokens = inp.row_tokens
        self.calls = inp.calls
        self._focus: dict[int, bool] = {}
        # Lines of old outputs worth keeping in their stubs and pointers (named later, changed
        # between runs): built on first use, from the rows this event sees.
        self.facts = FactContext(inp.rows, inp.start, inp.facts)
        self._young: frozenset[int] | None = None
        self._protected_reads: frozenset[int] | None = None
        # When set, the steps look only at these rows (`steps_newest_first`).
        self.only: frozenset[int] | None = None
        self._start = inp.start  # the event's live history starts here, whatever pass runs
        self._latest_by_digest: dict[int, dict[str, int]] = {}  # by the pass's start
        self._latest_by_call: dict[int, tuple[dict[str, int], dict[int, str]]] = {}

    # -- helpers ----------------------------------------------------------------------------
    def done(self) -> bool:
        return self.plan.total <= self.inp.target

    def view_kind(self, i: int) -> str:
        row = self.inp.rows[i]
        view = self.plan.views.get(row.id) or self.inp.views.get(row.id)
        return view.kind if view else VERBATIM

    def tok(self, i: int) -> int:
        return self.tokens[i] if i in self.tokens else self._base_tokens[i]

    def candidate(self, i: int) -> bool:
        return i < self.inp.tail_start and i not in self.inp.protected

    def apply(self, i: int, kind: str, message: dict[str, Any] | None, op: str, reason: str, handle: str = "") -> None:
        row = self.inp.rows[i]
        new_tokens = self.inp.count(message) if message is not None else 0
        saved = self.tok(i) - new_tokens
        if saved <= 0 and kind != REMOVED:
            return
        self.plan.views[row.id] = View(
            kind, message, new_tokens, reason, handle or msg_handle(row.id), self.inp.event_id
        )
        self.tokens[i] = new_tokens
        self.plan.total -= saved
        self.plan.saved += saved
        self.plan.ops[op] = self.plan.ops.get(op, 0) + 1

    def live(self) -> Iterator[int] | range:
        """The rows the steps may change outside the fresh tail (those of `only`, when set)."""
        end = min(self.inp.tail_start, len(self.inp.rows))
        if self.only is None:
            return range(self.inp.start, end)
        return iter(sorted(i for i in self.only if self.inp.start <= i < end))

    def tool_rows(self) -> Iterator[int]:
        rows = self.inp.rows
        for i in self.live():
            if rows[i].role == "tool" and i not in self.inp.protected:
                yield i

    def call_of(self, i: int) -> tuple[str, dict[str, Any]]:
        row = self.inp.rows[i]
        return self.calls.get(row.message.get("tool_call_id", ""), (row.message.get("name", ""), {}))

    def digest(self, i: int) -> str:
        """The sha256 of row `i`'s text (remembered per row for the session: `FactIndex.digests`)."""
        memo, row_id = self.facts.index.digests, self.inp.rows[i].id
        found = memo.get(row_id)
        if found is None:
            content = compaction_text(self.inp.rows[i].message)
            found = memo[row_id] = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
        return found

    def failed(self, i: int) -> bool:
        """Whether row `i`'s text reads as a failure (remembered per row: `FactIndex.failed`)."""
        memo, row_id = self.facts.index.failed, self.inp.rows[i].id
        found = memo.get(row_id)
        if found is None:
            found = memo[row_id] = looks_failed(compaction_text(self.inp.rows[i].message))
        return found

    def call_key(self, i: int) -> str:
        """Row `i`'s call as one string, tool name and arguments (keys sorted): runs with one key
        repeat one call (remembered per row: `FactIndex.call_keys`, with the call it was made
        from: a later message reusing the call's id replaces the session's entry, and the key
        must follow it as a fresh planner's would)."""
        memo, row_id = self.facts.index.call_keys, self.inp.rows[i].id
        call = self.call_of(i)
        found = memo.get(row_id)
        if found is None or found[0] is not call:
            found = memo[row_id] = (call, call[0] + json.dumps(call[1], sort_keys=True, default=str))
        return found[1]

    def carries_focus(self, i: int) -> bool:
        """Whether row `i` is part of the current task by the intent: its text (head) or its
        call's arguments name a focus path, module or symbol, or it answers a failed call."""
        if i not in self._focus:
            intent = self.inp.intent
            row = self.inp.rows[i]
            if not intent:
                self._focus[i] = False
            else:
                _, args = self.call_of(i) if row.role == "tool" else ("", {})
                text = compaction_text(row.message)[:INTENT_CHARS] + json.dumps(args, default=str)
                for call in row.message.get("tool_calls") or ():
                    text += str(call.get("function", {}).get("arguments") or "")[:INTENT_CHARS]
                self._focus[i] = intent.protects(text, row.message.get("tool_call_id", ""))
        return self._focus[i]

    def focus_last(self, indices: Iterator[int] | Sequence[int]) -> list[int]:
        """`indices` with the rows that carry focus content moved after the others, each part in
        its given order: a step reaches the task's own rows only when nothing else is left."""
        ordered = list(indices)
        return [i for i in ordered if not self.carries_focus(i)] + [i for i in ordered if self.carries_focus(i)]

    def young(self, i: int) -> bool:
        """Whether row `i` is inside an age window: younger than `eviction_min_age` user turns, or
        among the newest `observation_keep` tool outputs (the emergency's own steps ignore it)."""
        if self._young is None:
            # Over the whole live history (the event's start, not the pass's): which rows are
            # young must not depend on which pass asked first.
            rows, inp, start = self.inp.rows, self.inp, self._start
            young: set[int] = set()
            if inp.eviction_min_age > 0:
                ages = user_turns_after(rows, start)
                young |= {k for k, age in ages.items() if age < inp.eviction_min_age}
            if inp.observation_keep > 0:
                tools = [k for k in range(len(rows) - 1, start - 1, -1) if rows[k].role == "tool"]
                young |= set(tools[: inp.observation_keep])
            self._young = frozenset(young)
        return i in self._young

    def protected_read(self, i: int) -> bool:
        """Whether row `i` is a protected file read (context/observations/file_protection.py: the file's current
        version, within the protected tokens counted newest first)."""
        if self._protected_reads is None:
            # Over the whole live history and on the tokens the event found, not from the pass
            # that asked first nor on what earlier steps left: which reads are protected must not
            # depend on the order the steps visit rows in (a fenced pass asking first used to
            # leave every read before the fence unprotected).
            self._protected_reads = (
                current_reads(
                    self.inp.rows, self._start, self.calls, self._base_tokens.__getitem__, self.inp.file_protect_tokens
                )
                if self.inp.file_protect_tokens > 0
                else frozenset()
            )
        return i in self._protected_reads

    def spared(self, i: int) -> bool:
        """Left alone by every step below the emergency's own: an age window or a protected read."""
        return self.young(i) or self.protected_read(i)

    def tool_message(self, i: int, content: str) -> dict[str, Any]:
        message = self.inp.rows[i].message
        out = {"role": "tool", "tool_call_id": message.get("tool_call_id", ""), "content": content}
        if message.get("name"):
            out["name"] = message["name"]
        return out

    # -- light ------------------------------------------------------------------------------
    def _latest_outputs(self) -> dict[str, int]:
        """The newest row (from the pass's start) of each output text worth a pointer, by digest;
        once per start (the deep pass visits its rows a chunk at a time)."""
        start = self.inp.start
        latest = self._latest_by_digest.get(start)
        if latest is None:
            latest = self._latest_by_digest[start] = {}
            for i in range(start, len(self.inp.rows)):
                row = self.inp.rows[i]
                if row.role == "tool" and len(compaction_text(row.message)) >= MIN_DEDUP_CHARS:
                    latest[self.digest(i)] = i
        return latest

    def _latest_calls(self) -> tuple[dict[str, int], dict[int, str]]:
        """The newest row (from the pass's start) of each repeatable call by its key, and each
        such row's key; once per start, like `_latest_outputs`."""
        start = self.inp.start
        found = self._latest_by_call.get(start)
        if found is None:
            latest: dict[str, int] = {}
            keys: dict[int, str] = {}
            for i in range(start, len(self.inp.rows)):
                if self.inp.rows[i].role != "tool":
                    continue
                name, _args = self.call_of(i)
                if not name or name in self.inp.protected_tools or name in ("file_write", "file_edit"):
                    continue
                key = self.call_key(i)
                keys[i] = key
                latest[key] = i
            found = self._latest_by_call[start] = (latest, keys)
        return found

    def dedup(self) -> None:
        latest = self._latest_outputs()
        for i in self.focus_last(self.tool_rows()):
            if self.done():
                return
            if self.view_kind(i) not in (VERBATIM, FILTERED) or self.young(i):
                continue
            if len(compaction_text(self.inp.rows[i].message)) < MIN_DEDUP_CHARS:
                continue
            j = latest.get(self.digest(i), i)
            if j > i:
                text = pointer_text(
                    "duplicate output",
                    msg_handle(self.inp.rows[i].id),
                    f"identical result {msg_handle(self.inp.rows[j].id)}",
                )
                self.apply(i, DEDUP, self.tool_message(i, text), "dedup", "identical to a later output")

    def superseded(self) -> None:
        latest, keys = self._latest_calls()
        for i in self.focus_last(self.tool_rows()):
            if self.done():
                return
            if i not in keys or self.view_kind(i) not in (VERBATIM, FILTERED) or self.young(i):
                continue
            j = latest[keys[i]]
            if j > i:
                name, args = self.call_of(i)
                what = f"superseded {name} {tool_identity(name, args)}".strip()
                text = pointer_text(what, msg_handle(self.inp.rows[i].id), f"result {msg_handle(self.inp.rows[j].id)}")
                # What the newer run no longer shows (and what a later message named) stays: a
                # warning one run printed, the old value of an edited setting.
                content = compaction_text(self.inp.rows[i].message)
                text = "\n".join([text, *kept_facts("", self.facts.lost(i, content))])
                self.apply(i, SUPERSEDED, self.tool_message(i, text), "superseded", "a later call repeated it")

    def filter_big(self) -> None:
        for i in self.focus_last(self.tool_rows()):
            if self.done():
                return
            if self.view_kind(i) != VERBATIM or self.tok(i) <= self.inp.light_filter_tokens or self.spared(i):
                continue
            name, args = self.call_of(i)
            if name in self.inp.protected_tools:
                continue
            content = compaction_text(self.inp.rows[i].message)
            budget, filters = max(400, self.inp.light_filter_tokens * 2), self.inp.output_filters
            result = filter_output(content, tool=name, arguments=args, budget_chars=budget, filters=filters)
            if result is None:
                continue
            handle = msg_handle(self.inp.rows[i].id)
            shown = self.inp.count({"role": "tool", "content": result.text})
            text = f"{filtered_header(self.tok(i), shown, handle, result.kind)}\n{result.text}"
            # Lines a later message named, or a run of the same call changed, that the excerpt cut.
            extra = [line for line in self.facts.kept(i, content) if line not in result.text]
            text = "\n".join([text, *kept_facts("", extra)])
            self.apply(i, FILTERED, self.tool_message(i, text), "filter", f"{result.kind} excerpt")

    # -- full -------------------------------------------------------------------------------
    def mask_priority(self, i: int, last_user: int) -> int:
        name, _ = self.call_of(i)
        if i > last_user:
            return 3  # active task: last
        if name in READ_ONLY_TOOLS:
            return 0
        if self.failed(i):
            return 1  # errors of earlier turns: resolved or abandoned by now
        return 2

    def mask(self, protect_intent: bool) -> None:
        """By priority, oldest first within one; with `protect_intent` focus rows, the age windows
        and protected file reads are skipped, without it (the emergency) focus rows come after
        every other row."""
        order = self.focus_last(sorted(self.tool_rows(), key=lambda i: (self.mask_priority(i, self.inp.last_user), i)))
        for i in order:
            if self.done():
                return
            if self.view_kind(i) not in (VERBATIM, FILTERED):
                continue
            name, args = self.call_of(i)
            if name in self.inp.protected_tools or (protect_intent and self.spared(i)):
                continue
            row = self.inp.rows[i]
            content = compaction_text(row.message)
            if protect_intent and self.inp.intent.protects(
                content[:4000] + json.dumps(args, default=str), row.message.get("tool_call_id", "")
            ):
                continue
            first_line = next((ln for ln in content.splitlines() if ln.strip()), "")
            why = "old output masked"
            text = masked_text(
                name or "tool", tool_identity(name, args), self.tok(i), msg_handle(row.id), first_line, why
            )
            text = "\n".join([text, *kept_facts(content, self.facts.kept(i, content))])
            self.apply(i, MASKED, self.tool_message(i, text), "mask", why)

    def shrink_arguments(self, in_tail: bool = False, protect: bool = True) -> None:
        """Cut long tool-call arguments (file bodies being written) outside the fresh tail; with
        `in_tail`, inside it (an emergency's step before removing older history: the write is
        done and on disk, the turns before it are not recoverable from the prompt). With
        `protect`, edits keep `edit_keep_chars` (the emergency's own steps cut to the plain head)."""
        rows = range(self.inp.tail_start, len(self.inp.rows)) if in_tail else self.live()
        for i in rows:
            if self.only is not None and i not in self.only:
                continue
            row = self.inp.rows[i]
            if self.done():
                return
            if row.role != "assistant" or i in self.inp.protected or self.view_kind(i) != VERBATIM:
                continue
            if not in_tail and not self.candidate(i):
                continue
            keep = self.inp.edit_keep_chars if protect else 0
            message = shrunk_call_arguments(row.message, msg_handle(row.id), keep)
            if message is not None:
                self.apply(i, SHRUNK, message, "shrink_args", "long tool-call arguments cut")

    # -- emergency --------------------------------------------------------------------------
    def removal_groups(self) -> list[RemovalGroup]:
        """The units removal may take, oldest first, a prepared block as one group. Groups whose
        units are all anchors or already removed stay in the list (empty): oldest-first removal
        stops at them once under target, as it stops at any unit."""
        end = self.inp.tail_start if self.inp.removal_end is None else min(self.inp.tail_start, self.inp.removal_end)
        groups: list[tuple[list[Unit], bool]] = []
        block_end = -1
        for unit in self.inp.units:
            inside = unit.start < block_end
            block_end = max(block_end, self.inp.blocks.get(unit.start, -1))
            if unit.end > end:
                break
            if not inside or not groups:
                groups.append(([], unit.start < block_end))
            indices = range(unit.start, unit.end)
            if unit.start < self.inp.start or any(i in self.inp.protected for i in indices):
                continue
            if all(self.view_kind(i) == REMOVED for i in indices):
                continue
            groups[-1][0].append(unit)
        return [RemovalGroup(tuple(units), block) for units, block in groups]

    def removal_order(self, groups: list[RemovalGroup]) -> list[RemovalGroup]:
        """Oldest first (RECENCY) or least relevant to the current query first (RELEVANCE).
        Not focus-last, unlike the other steps: measured on the 400-turn coding replay at 32k,
        deferring focus units fragmented removal (53 leaf summaries instead of 3) and lowered
        R_verbatim 0.364 → 0.335; the relevance order already ranks the focus terms (they are
        in the query) without a second rule."""
        if self.inp.eviction == RECENCY:
            order = list(range(len(groups)))
        else:
            rows = self.inp.rows
            texts = [
                " ".join(self.relevance_text(i) for unit in group.units for i in range(unit.start, unit.end))
                for group in groups
            ]
            order = least_relevant_first(current_query(rows, self.inp.last_user), texts)
        if self.inp.focus_band > 1 and self.inp.intent:  # EngineConfig.removal_focus_band
            focus = [any(self.carries_focus(i) for u in g.units for i in range(u.start, u.end)) for g in groups]
            order = focus_last_in_band(order, focus, self.inp.focus_band)
        return [groups[k] for k in order]

    def relevance_text(self, i: int) -> str:
        message = self.inp.rows[i].message
        calls = " ".join(str(c.get("function", {}).get("arguments") or "") for c in message.get("tool_calls") or ())
        return (compaction_text(message) + " " + calls)[:RELEVANCE_CHARS]

    def cannot_meet_from(self, first: int) -> bool:
        """Whether the steps cannot meet the target changing only rows from `first` on, even if
        they left nothing of each row they may change (a bound: a step only ever shrinks a row;
        in the fresh tail only a call's arguments, never an anchor)."""
        rows, tail, protected = self.inp.rows, self.inp.tail_start, self.inp.protected
        reducible = sum(
            self.tok(i)
            for i in range(first, len(rows))
            if i not in protected and (i < tail or rows[i].role == "assistant")
        )
        return self.plan.total - reducible > self.inp.target

    def steps_newest_first(self, steps: Sequence[Callable[[], None]]) -> bool:
        """Run `steps` so that they skip the oldest rows whose removal is already certain, with
        the plan they would have made over every row (True), or change nothing (False: the
        caller runs them over every row).

        Why: an emergency masks, dedups and cuts every old output before removal takes the
        oldest units, and most of what it masked is then removed (~40 outputs per event of the
        coding replay, a third of planning it; benchmark B1). Without a stop on the target,
        what a step makes of a row depends on that row alone, so the steps may visit rows in
        any order: first every row removal cannot take (the tail, units with an anchor), then
        removal groups newest first, a chunk at a time, until the rows visited alone hold more
        than the target. Removal, oldest first, then takes every group not visited whatever
        its masks would have been, and stops where it would have stopped. If the target is met
        before removal (the steps alone were enough), where the steps stop depends on their
        order, so nothing is kept."""
        if not (self.inp.eviction == RECENCY and not (self.inp.focus_band > 1 and self.inp.intent)):
            return False  # removal out of session order: any group may stay
        groups = [[i for unit in g.units for i in range(unit.start, unit.end)] for g in self.removal_groups()]
        grouped = {i for rows in groups for i in rows}
        saved = (dict(self.plan.views), self.plan.saved, dict(self.plan.ops), self.plan.total, dict(self.tokens))
        unvisited = sum(self.tok(i) for rows in groups for i in rows)  # tokens of the groups not visited
        first = min(self.inp.start, self.inp.tail_start)  # the tail's shrink looks from the tail's start
        chunk = [i for i in range(first, len(self.inp.rows)) if i not in grouped]
        left = len(groups)
        kept_share = FIRST_KEPT_SHARE  # of a visited group's tokens, what the steps left (sizes the next chunk)
        while True:
            before = sum(self.tok(i) for i in chunk if i in grouped)
            self.only = frozenset(chunk)
            try:
                for step in steps:
                    step()
            finally:
                self.only = None
            if self.done():
                views, self.plan.saved, ops, self.plan.total, tokens = saved
                self.plan.views, self.plan.ops, self.tokens = views, ops, tokens
                return False
            short = self.inp.target - (self.plan.total - unvisited)
            if short < 0 or left == 0:
                return True
            if before:
                kept_share = max(MIN_KEPT_SHARE, sum(self.tok(i) for i in chunk if i in grouped) / before)
            chunk, covered = [], 0
            while left > 0 and covered * kept_share <= short:
                left -= 1
                tokens_of = sum(self.tok(i) for i in groups[left])
                covered += tokens_of
                unvisited -= tokens_of
                chunk = groups[left] + chunk

    def remove_units(self) -> None:
        # Removal rewrites the head of the prompt (a cache break); once it is needed, go down to
        # the lower removal target so the next removal is many turns away.
        if self.inp.removal_target is not None:
            self.inp = dataclasses.replace(self.inp, target=min(self.inp.target, self.inp.removal_target))
        groups = self.removal_groups()
        ordered = groups if self.inp.tier == SUMMARIZE else self.removal_order(groups)
        chronological = ordered == groups
        for group in ordered:
            # Oldest first, a prepared block is taken whole even when it starts right at the
            # target; out of order, every group is a fresh decision.
            if self.done() and not (chronological and group.block):
                return
            for unit in group.units:
                for i in range(unit.start, unit.end):
                    self.apply(i, REMOVED, None, "remove", "left out; see the omission marker")


def _fenced_pass(planner: _Planner, inp: PlanInput, steps: Sequence[Callable[[], None]]) -> bool:
    """The steps over the rows after the previous event's fence only; True if the target was met
    before one of them (met only by the last, the deep pass goes on to its lower target)."""
    planner.inp = dataclasses.replace(inp, start=inp.fence)
    for step in steps:
        if planner.done():
            return True
        step()
    return False


def plan_compaction(inp: PlanInput) -> Plan:
    """First a fenced pass (only rows after the previous event's boundary change, so the
    prompt prefix the provider cached at that event survives), then, if the target is still
    not met, the same steps over the whole live history, removal last. The compact command
    (`SUMMARIZE`) only removes: every unit outside the kept tail."""
    planner = _Planner(inp)
    if inp.tier == SUMMARIZE:
        planner.remove_units()
        return planner.plan
    tier_rank = TIERS.index(inp.tier)
    steps = [planner.dedup, planner.superseded, planner.filter_big]
    if tier_rank >= 1:
        steps += [
            lambda: drop_ephemeral(planner, inp.protected_tools),  # the masker's ephemeral tier first
            lambda: planner.mask(protect_intent=True),
            planner.shrink_arguments,
        ]
    if tier_rank >= 2:
        # The safety net's own steps: every output may be masked (focus last), edits cut to their
        # head, and oversized arguments in the tail are cut before any older turn is removed.
        steps += [
            lambda: planner.mask(protect_intent=False),
            lambda: planner.shrink_arguments(protect=False),
            lambda: planner.shrink_arguments(in_tail=True),
        ]
    fenced = inp.fence > inp.start
    # The deep pass's steps may skip what removal takes (`steps_newest_first`). Then a fenced pass
    # that cannot meet the target even if it left nothing of the rows after the fence is not run
    # first: what it would do to a row the deep pass does the same, and doing it twice changes
    # nothing (a row already masked, pointed at or cut is left alone); in an emergency it was
    # most of the plan, masking the outputs since the last event that removal then takes.
    newest_first = tier_rank >= 2 and inp.newest_first
    fenced_pass_due = fenced and not (newest_first and planner.cannot_meet_from(inp.fence))
    if fenced_pass_due and _fenced_pass(planner, inp, steps):
        return planner.plan
    # The head of the prompt changes from here on (a full cache break): make it count by going
    # down to the lower target, so the next events can stay behind their fence.
    deep_target = inp.target if inp.removal_target is None else min(inp.target, inp.removal_target)
    deep = dataclasses.replace(inp, start=inp.start, target=deep_target if fenced else inp.target)
    planner.inp = deep
    if newest_first and not planner.done():
        if planner.steps_newest_first(steps):
            planner.remove_units()
            return planner.plan
        if fenced and not fenced_pass_due:  # the steps alone meet the target: in the usual order
            if _fenced_pass(planner, inp, steps):
                return planner.plan
            planner.inp = deep
    for step in steps:
        if planner.done():
            return planner.plan
        step()
    if tier_rank >= 2 and not planner.done():
        planner.remove_units()
    return planner.plan
