"""Runs a map: items in parallel up to the bound, resumed ones skipped, the cost cap enforced
before each launch, every finished item recorded as it finishes, one JSONL artifact at the end.

Why the cap is checked before launching and not mid-call: a call already paid for is worth its
answer, so the map stops launching and lets the calls in flight land; it can overshoot the cap
by at most `concurrency` items, which the result says.

Cancellation (Esc in the TUI, a kill): the items in flight are cancelled, the finished ones are
already in the ledger (a re-run skips them), and the progress stream says how many were kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.agent.map.item_answer import Conversation, ItemOutcome, answer_item
from myrm_tui.agent.map.ledger import Finished, Ledger
from myrm_tui.agent.map.progress import Tally
from myrm_tui.agent.map.spec import MapSpec, item_key

_log = logging.getLogger(__name__)

# Gives a fresh worker for one item (by its index): a model exchange, or a child agent.
OpenConversation = Callable[[int], Conversation]

# Calls that failed at the provider in a row (no answer at all) before the map stops launching:
# a wrong key or an endpoint that is down fails every item, and 3 is enough to tell.
MAX_FAILED_CALLS_IN_A_ROW = 3
# Characters of each item kept in its artifact row, to tell rows apart when reading them.
ITEM_PREVIEW_CHARS = 200


@dataclass
class Row:
    index: int
    key: str
    item: str
    status: str = "skipped"  # ok, failed, skipped (not launched: cap, stop or cancellation)
    output: Any = None
    error: str = ""
    attempts: int = 0
    tokens: int = 0
    cost: float = 0.0
    resumed: bool = False

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"index": self.index, "status": self.status, "output": self.output}
        if self.error:
            row["error"] = self.error
        row.update(attempts=self.attempts, resumed=self.resumed, key=self.key, item=self.item[:ITEM_PREVIEW_CHARS])
        return row


@dataclass
class MapRun:
    spec: MapSpec
    rows: list[Row]
    tally: Tally
    stopped: str = ""  # why items were left unlaunched ("" when all ran)
    cancelled: bool = False
    seconds: float = 0.0
    calls_failed_in_a_row: int = field(default=0, repr=False)

    def count(self, status: str) -> int:
        return sum(1 for row in self.rows if row.status == status)

    def jsonl(self) -> str:
        return "".join(json.dumps(row.as_json(), ensure_ascii=False) + "\n" for row in self.rows)


def cap_reached(spec: MapSpec, tally: Tally) -> str:
    """Why no new item may start, or ""."""
    if tally.tokens >= spec.max_tokens:
        return f"the token cap was reached ({tally.tokens:,} of {spec.max_tokens:,} tokens)"
    if spec.max_cost is not None and tally.cost >= spec.max_cost:
        return f"the cost cap was reached (${tally.cost:.4f} of ${spec.max_cost:.4f})"
    return ""


async def run_map(
    spec: MapSpec,
    open_conversation: OpenConversation,
    ledger: Ledger,
    emit: Callable[[str], None],
) -> MapRun:
    """Every item of `spec` answered, resumed or skipped. `open_conversation(index)` gives a
    fresh worker for one item (a model exchange, or a child agent)."""
    started = time.monotonic()
    rows = [Row(i, item_key(item), item) for i, item in enumerate(spec.items)]
    tally = Tally(total=len(rows))
    run = MapRun(spec, rows, tally)
    finished = ledger.finished()
    for row in rows:
        earlier = finished.get(row.key)
        if earlier is not None:
            row.status, row.output, row.attempts, row.resumed = "ok", earlier.output, earlier.attempts, True
            tally.done += 1
            tally.resumed += 1
    emit(tally.line(spec.kind, f"{spec.model}, {spec.concurrency} at a time"))
    slots = asyncio.Semaphore(spec.concurrency)

    async def one(row: Row) -> None:
        try:
            outcome = await _answer(open_conversation, row, spec)
        finally:
            slots.release()
        _settle(run, row, outcome, ledger)
        if tally.due():
            emit(tally.line(spec.kind))

    try:
        async with asyncio.TaskGroup() as group:
            for row in rows:
                if row.resumed:
                    continue
                await slots.acquire()
                reason = cap_reached(spec, tally) or _provider_down(run)
                if reason:
                    slots.release()
                    run.stopped = reason
                    break
                group.create_task(one(row))
    except asyncio.CancelledError:
        run.cancelled = True
        tally_note = f"cancelled; {tally.done - tally.resumed} finished this run are kept for a re-run"
        emit(tally.line(spec.kind, tally_note))
        raise
    run.seconds = time.monotonic() - started
    for row in rows:
        if row.status == "skipped" and run.stopped:
            row.error = f"not started: {run.stopped}"
    emit(tally.line(spec.kind, f"stopped: {run.stopped}" if run.stopped else "finished"))
    return run


async def _answer(open_conversation: OpenConversation, row: Row, spec: MapSpec) -> ItemOutcome:
    conversation: Conversation | None = None
    try:
        conversation = open_conversation(row.index)
        return await answer_item(conversation, spec, row.item)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug or a full disk in one item: that row says so, the map goes on
        _log.exception("map item %d failed", row.index)
        return ItemOutcome("failed", error=f"internal error: {type(exc).__name__}: {exc}", call_failed=True)
    finally:
        if conversation is not None:
            await conversation.aclose()


def _settle(run: MapRun, row: Row, outcome: ItemOutcome, ledger: Ledger) -> None:
    tally = run.tally
    row.status, row.output, row.error = outcome.status, outcome.output, outcome.error
    row.attempts, row.tokens, row.cost = outcome.attempts, outcome.tokens, outcome.cost
    tally.done += 1
    tally.tokens += outcome.tokens
    tally.cost += outcome.cost
    if outcome.status == "ok":
        ledger.record(Finished(row.key, outcome.output, outcome.attempts, outcome.tokens, outcome.cost))
        run.calls_failed_in_a_row = 0
    else:
        tally.failed += 1
        run.calls_failed_in_a_row = run.calls_failed_in_a_row + 1 if outcome.call_failed else 0


def _provider_down(run: MapRun) -> str:
    if run.calls_failed_in_a_row >= MAX_FAILED_CALLS_IN_A_ROW:
        last = next((r.error for r in reversed(run.rows) if r.status == "failed"), "")
        return f"{run.calls_failed_in_a_row} item calls in a row failed ({last})"
    return ""
