"""The idle warm-up of the next compaction event: it may only save the event time.

Why these tests: the warm-up (`context/compaction/event_warmup.py`) runs the scans an event's
extractive summaries need while the user reads, so the event that removes those rows finds them
remembered. It must never change a prompt byte (it stores nothing; the event decides and writes
everything itself), it must warm the rows the next event actually removes (else it is idle CPU for
nothing), and it must run on the path the user runs: the agent's idle step after a turn.
"""

from __future__ import annotations

import json

import pytest

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.replay import ReplayOptions, replay
from myrm_tui.store import Store
from tests.context.engine_helpers import MODEL, info

WINDOW = 8_000
# The time both compared sessions' rows are stored at (any fixed instant).
STORED_AT = 1_764_806_400.0


def _turn(n: int) -> list[dict]:
    """One coding turn: an ask, a read of one of three files (re-read later with one line
    changed), its output, and a reply that names a setting seen two turns before."""
    cid = f"c{n}"
    path = f"src/service_{n % 3}.py"
    lines = [f"def handler_{n % 3}_{i}(request): return route_{i}(request)" for i in range(60)]
    lines[7] = f"LEASE_TTL_{n % 3} = {30 + n}  # seconds"
    return [
        {"role": "user", "content": f"step {n}: look at {path} and tell me the lease ttl"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": path})}}
            ],
        },
        {"role": "tool", "tool_call_id": cid, "name": "read", "content": "\n".join(lines)},
        {"role": "assistant", "content": f"Noted LEASE_TTL_{(n - 2) % 3} from two turns ago; handler_{n % 3}_7 too."},
    ]


def _inp() -> TurnInput:
    return TurnInput("You are a coding agent.", [], info(WINDOW), 512, now=0.0)


def _fed(store: Store, turns: int) -> tuple[str, ContextEngine]:
    """A session of `turns` coding turns, each assembled as it arrived (no idle step)."""
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    for n in range(1, turns + 1):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        engine.assemble(_inp())
    return session, engine


async def _session(store: Store, turns: int, *, warm: bool) -> tuple[list[list[dict]], list[set[int]], int]:
    """Prompts per turn, the row ids each event removed, and how many rows idle steps warmed.
    The store's clock is fixed: a summary names the minute its messages were written, and two
    sessions written a few seconds apart (more on a loaded machine) could straddle a minute."""
    store.clock = lambda: STORED_AT
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    prompts: list[list[dict]] = []
    removed: list[set[int]] = []
    warmed = 0
    for n in range(1, turns + 1):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        before = {mid for mid, view in engine.views.items() if view.kind == "removed"}
        out = engine.assemble(_inp())
        prompts.append(out.messages)
        if out.report.event is not None:
            removed.append({mid for mid, view in engine.views.items() if view.kind == "removed"} - before)
        if warm:
            warmed += await engine.warm_next_event(_inp())
    return prompts, removed, warmed


@pytest.mark.slow
async def test_a_warmed_session_sends_every_prompt_a_cold_one_sends(tmp_path):
    (tmp_path / "cold").mkdir()
    (tmp_path / "warm").mkdir()
    with Store.open(tmp_path / "cold") as cold_store, Store.open(tmp_path / "warm") as warm_store:
        cold, cold_removed, _ = await _session(cold_store, 60, warm=False)
        warm, warm_removed, warmed = await _session(warm_store, 60, warm=True)
    assert len(cold_removed) >= 2, "the session must reach several removal events"
    assert warmed > 0, "the idle steps warmed nothing"
    assert warm == cold, "the warm-up changed a prompt"
    assert warm_removed == cold_removed


async def test_the_rows_an_event_removes_were_warmed_before_it(store):
    session = store.create_session(MODEL).id
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    covered = 0
    for n in range(1, 101):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
        before = {mid for mid, view in engine.views.items() if view.kind == "removed"}
        warmed_before = set(engine.warmup.warmed())
        ran = engine.stats.events
        out = engine.assemble(_inp())
        # The agent runs the event a request owes while the model answers (`Agent.turn`).
        event = engine.pay_owed() or (out.report.event if engine.stats.events > ran else None)
        if event is not None and warmed_before and event.summaries.created_by_depth:
            gone = {mid for mid, view in engine.views.items() if view.kind == "removed"} - before
            tools = {r.id for r in engine.rows if r.id in gone and r.role == "tool"}
            # Rows arrived since the idle step may join the removal; the bulk was foreseen.
            assert len(tools & warmed_before) >= 0.8 * len(tools), (sorted(tools - warmed_before), sorted(tools))
            covered += bool(tools)
        await engine.warm_next_event(_inp())
    assert covered >= 2


async def test_the_warm_up_leaves_the_store_as_it_was(store):
    session, engine = _fed(store, 40)
    nodes, events = store.summaries(session), store.events(session)
    assert await engine.warm_next_event(_inp()) > 0
    assert store.summaries(session) == nodes and store.events(session) == events


@pytest.mark.slow
def test_the_agents_idle_step_after_a_turn_warms_the_next_event(monkeypatch):
    """The path the user runs: `myrm replay` drives `Agent.maintain` after each turn as the TUI
    does once a turn has ended; the warm-up must run there (not only when a test calls it)."""
    warmed: list[int] = []
    original = ContextEngine.warm_next_event

    async def spy(self: ContextEngine, inp: TurnInput) -> int:
        done = await original(self, inp)
        warmed.append(done)
        return done

    monkeypatch.setattr(ContextEngine, "warm_next_event", spy)
    lines = [{"turn": n, "messages": _turn(n)} for n in range(1, 41)]
    records = [r for r in replay(lines, ReplayOptions(window=WINDOW)) if "prompt" in r]
    assert len(records) == 40
    assert len(warmed) >= 39 and sum(warmed) > 0, warmed


def test_a_prepared_leaf_is_activated_without_working_out_kept_lines(store):
    """Finding the kept lines reads every later message: an event asked for them for every run,
    also for runs a prepared summary stands for, where they go unused."""
    from myrm_tui.context.compaction.dag import SummaryDag
    from myrm_tui.context.summary.schema import StructuredSummary
    from myrm_tui.context.window.tokens import count_text_tokens

    session = store.create_session(MODEL).id
    for n in range(1, 4):
        for message in _turn(n):
            store.append_message(session, message, count_message_tokens(message, MODEL))
    rows = store.messages(session)
    dag = SummaryDag(store, session)
    dag.prepare(rows[:4], StructuredSummary(user_goal="read the services"), lambda m: count_message_tokens(m, MODEL))
    asked: list[int] = []

    def kept(message_id: int) -> list[str]:
        asked.append(message_id)
        return []

    def count_text(text: str) -> int:
        return count_text_tokens(text, MODEL)

    dag.leaf(rows[:4], rows[4].id, 1, lambda m: count_message_tokens(m, MODEL), count_text, kept=kept)
    assert not asked, "kept lines were worked out for a prepared leaf"
    dag.leaf(rows[4:8], rows[8].id, 1, lambda m: count_message_tokens(m, MODEL), count_text, kept=kept)
    assert asked, "an extractive leaf must ask for its kept lines"


async def test_a_cancelled_warm_up_stops_at_the_next_unit(store, monkeypatch):
    """A new turn cancels the idle step; the worker thread must not go on warming (it would take
    the engine's lock and the CPU from the turn) beyond the unit it is in."""
    import asyncio
    import threading

    from myrm_tui.context.compaction.event_warmup import EventWarmup
    from myrm_tui.context.compaction.summary_area import SummaryArea

    session, engine = _fed(store, 40)
    assert len(engine.warmup.pieces(_inp())[1]) >= 3, "the test needs several units to warm"
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()
    calls: list[int] = []
    warm, warm_now = SummaryArea.warm, EventWarmup.warm_now

    def slow_warm(self, indices, model, budget):
        calls.append(len(indices))
        entered.set()
        release.wait(10)
        warm(self, indices, model, budget)

    def tracked(self, inp, stop=None):
        try:
            return warm_now(self, inp, stop)
        finally:
            finished.set()

    monkeypatch.setattr(SummaryArea, "warm", slow_warm)
    monkeypatch.setattr(EventWarmup, "warm_now", tracked)
    task = asyncio.ensure_future(engine.warm_next_event(_inp()))
    while not entered.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.to_thread(finished.wait, 10)
    assert len(calls) == 1, f"the thread went on after the cancel: {len(calls)} units"
