"""The safety net's event while the model answers, on the path the user runs (`Agent.turn`).

Why: the event a crossing request owes (the `compact_while_answering` setting) is only off the
user's wait if the agent sends the request first and runs the event in a worker thread while the
provider answers, and finishes it before the answer is stored (the store's transaction and the
engine's lock would otherwise hold the event loop). The provider must have received the whole
history in that request, and the next request the compacted one.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

from myrm_tui.agent.events import AssistantMessageStored, StepStarted, TurnError
from myrm_tui.agent.read_registry import ReadRegistry
from myrm_tui.context.compaction.compactor import Compactor
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import make_agent

WINDOW = 16_000
THINK_MS = 300  # the provider's time to its first token: the event runs inside it


def _answer(n: int) -> str:
    return " ".join(f"point {n}.{i}: the lease ttl of service {i % 7} is {30 + n + i} seconds." for i in range(25))


# No prompt count from the provider: the ladder then reads our own count (`usage_ratio` 1).
USAGE = {"prompt_tokens": 0, "completion_tokens": 100}


def _quick_turns(count: int = 30) -> list[dict[str, Any]]:
    """Long answers that stream at once."""
    return [{"text": _answer(n), "chunk_size": 1_000_000, "usage": USAGE} for n in range(1, count + 1)]


def _slow_events(monkeypatch, trigger: str) -> None:
    """Each compaction event whose trigger holds `trigger` takes two seconds longer: far above
    what a loaded box's fsyncs and scheduling hold the loop for (0.6 s seen beside a CI run)."""
    real = Compactor.event

    def slow(self, *args, **kwargs):
        if trigger in kwargs.get("trigger", ""):
            time.sleep(2.0)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Compactor, "event", slow)


async def test_the_crossing_request_goes_out_whole_and_its_event_runs_in_a_thread_while_the_model_answers(
    store, workspace, script, monkeypatch, tmp_path
):
    turns = [{**turn, "delay_ms": THINK_MS} for turn in _quick_turns()]
    model = script(*turns, context_window=WINDOW, record="requests.jsonl")
    agent = make_agent(store, workspace, model, approval="yolo", compact_while_answering=True)
    runs: list[tuple[str, bool, float, float]] = []  # trigger, on the loop's thread, started, ended
    real = Compactor.event

    def timed(self, *args, **kwargs):
        started = time.monotonic()
        try:
            return real(self, *args, **kwargs)
        finally:
            on_loop = threading.current_thread() is threading.main_thread()
            runs.append((kwargs.get("trigger", ""), on_loop, started, time.monotonic()))

    monkeypatch.setattr(Compactor, "event", timed)
    steps: list[tuple[float, float]] = []  # each request: sent, its answer stored
    owed_at = None
    for n in range(1, 31):
        sent = stored = 0.0
        async for event in agent.turn(f"question {n}: what are the lease ttls now?"):
            if isinstance(event, StepStarted):
                sent = time.monotonic()
            elif isinstance(event, AssistantMessageStored):
                stored = time.monotonic()
        steps.append((sent, stored))
        reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
        if owed_at is None and "while the model answers" in str(reports[-1]["ladder"]["action"]):
            owed_at = len(reports) - 1
        if owed_at is not None and len(reports) > owed_at + 1:
            break
    assert owed_at is not None, "the session never crossed the safety net"

    paid = [r for r in runs if "while the model answered" in r[0]]
    assert len(paid) == 1
    _, on_loop, started, ended = paid[0]
    assert not on_loop, "the event ran on the event loop"
    sent, stored = steps[owed_at]
    assert sent <= started and ended <= stored, "not while the model answered"

    requests = [json.loads(line) for line in (Path(tmp_path) / "requests.jsonl").read_text().splitlines()]
    crossing, after = requests[owed_at], requests[owed_at + 1]
    text = lambda messages: "\n".join(str(m.get("content")) for m in messages)  # noqa: E731
    assert all(_answer(k) in text(crossing) for k in range(1, owed_at + 1)), "the crossing request was cut"
    assert not all(_answer(k) in text(after) for k in range(1, owed_at + 1)), "the next request was not compacted"
    reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
    assert reports[owed_at]["tokens"] <= reports[owed_at]["budget"]["prompt_limit"]
    assert reports[owed_at + 1]["event"]["tier"] == "emergency"  # the next request reports it


async def test_a_file_the_owed_events_reread_shows_counts_as_seen_only_from_the_next_request(store, workspace, script):
    """The event's post-compaction reread re-reads the files the model wrote; while the model
    answers the request that went out without it, the model has not seen those files as they are
    now, so an edit in that answer must still be checked against what it saw before (the
    stale-edit guard, agent/read_registry.py). From the next request on, the reread is in the
    prompt and the file counts as seen."""
    write = {"id": "w", "name": "file_write", "arguments": {"path": "x.py", "content": "VERSION_0\n"}}
    turns: list[dict[str, Any]] = [{"text": "", "tool_calls": [write], "usage": USAGE}, *_quick_turns(31)]
    model = script(*turns, context_window=WINDOW)
    agent = make_agent(store, workspace, model, approval="yolo", compact_while_answering=True)
    registry = ReadRegistry(store, agent.session_id, workspace)
    target = workspace / "x.py"
    answered_unseen = None
    for n in range(1, 31):
        if answered_unseen is None and n > 1:  # a formatter, the user's editor: a version the model never saw
            target.write_text(f"VERSION_{n}\n")
        async for event in agent.turn(f"question {n}: what are the lease ttls now?"):
            if isinstance(event, AssistantMessageStored) and "while the model answers" in _last_action(store, agent):
                # The owed event ran, and reread x.py, while this answer streamed.
                answered_unseen = registry.changed_since_seen(target, target.read_bytes())
        if answered_unseen is not None and n > 1 and "while the model answers" not in _last_action(store, agent):
            break  # the next request (this turn's) carried the reread
    assert answered_unseen is True, "while the model answered, a reread it had not seen counted as seen"
    assert not registry.changed_since_seen(target, target.read_bytes()), "the next request showed it"
    seen = registry.last_seen(target)
    assert seen is not None and seen.how == "reread"


def _last_action(store, agent) -> str:
    reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
    return str(reports[-1]["ladder"]["action"]) if reports else ""


async def test_the_event_loop_stays_free_while_the_owed_event_runs(store, workspace, script, monkeypatch):
    """The answer may stream faster than the event runs (here at once, and the event is slowed):
    the agent awaits the worker before storing the answer, so the loop (the TUI's keys and
    frames) is never held on the engine's or the store's lock meanwhile."""
    model = script(*_quick_turns(), context_window=WINDOW)
    agent = make_agent(store, workspace, model, approval="yolo", compact_while_answering=True)
    _slow_events(monkeypatch, "while the model answered")
    gaps: list[float] = []
    owed_step = False
    for n in range(1, 31):
        async for event in agent.turn(f"question {n}: what are the lease ttls now?"):
            if isinstance(event, StepStarted) and "while the model answers" in _last_action(store, agent):
                owed_step = True
                ticker = asyncio.ensure_future(_tick(gaps))
            elif isinstance(event, AssistantMessageStored) and owed_step:
                ticker.cancel()
        if owed_step:
            break
    assert owed_step, "the session never crossed the safety net"
    assert max(gaps) < 1.0, f"the loop was held {max(gaps):.2f} s"


async def _tick(gaps: list[float]) -> None:
    last = time.monotonic()
    while True:
        await asyncio.sleep(0.01)
        now = time.monotonic()
        gaps.append(now - last)
        last = now


async def test_a_provider_that_refuses_the_whole_request_gets_the_compacted_one_not_a_second_emergency(
    store, workspace, script, tmp_path
):
    """The provider counts more than we do and refuses the request that went out whole: the
    compaction it owed has run meanwhile, so the retry sends that compacted prompt, not a forced
    emergency on top (another plan on the event loop, and more history left out had the owed
    event stopped above the emergency's target)."""
    turns = _quick_turns()
    crossing = await _crossing_turn(turns, script, workspace, tmp_path)
    turns[crossing] = {**turns[crossing], "error": "context_window", "error_times": 1}
    agent = make_agent(store, workspace, script(*turns, context_window=WINDOW), compact_while_answering=True)
    for n in range(1, crossing + 2):
        async for _ in agent.turn(f"question {n}: what are the lease ttls now?"):
            pass
    events = [e.data for e in store.events(agent.session_id, "compaction") if e.data.get("state") == "done"]
    assert [e["trigger"] for e in events if "context_exceeded" in e["trigger"]] == [], "a second emergency ran"
    assert len(events) == 1 and "while the model answered" in events[0]["trigger"]
    reports = [e.data for e in store.events(agent.session_id, event_kinds.ASSEMBLE)]
    assert reports[-1]["tokens"] < reports[-2]["tokens"], "the retry was not the compacted prompt"
    assert reports[-1]["ladder"]["action"] != "forced", "the retry forced an emergency"


async def _crossing_turn(turns: list[dict[str, Any]], script, workspace, tmp_path) -> int:
    """The scripted turn that answers the request crossing the safety net: a dry run of the same
    session (its own store) finds the request; one assistant message per turn before it."""
    from myrm_tui.store import Store

    (tmp_path / "dry").mkdir()
    with Store.open(tmp_path / "dry") as dry_store:
        dry = make_agent(dry_store, workspace, script(*turns, context_window=WINDOW), compact_while_answering=True)
        for n in range(1, len(turns) + 1):
            async for _ in dry.turn(f"question {n}: what are the lease ttls now?"):
                pass
            if "while the model answers" in _last_action(dry_store, dry):
                return n - 1
    raise AssertionError("the dry run never crossed the safety net")


async def test_the_loop_stays_free_when_the_request_owing_an_event_fails(
    store, workspace, script, monkeypatch, tmp_path
):
    """The connection drops in the answer to the request that went out whole, while the worker
    is inside its event (one store transaction): the turn's error and the partial answer are
    written once it is done, and the loop is not held on the store's lock meanwhile."""
    turns = _quick_turns()
    crossing = await _crossing_turn(turns, script, workspace, tmp_path)
    # Part of an answer after 0.3 s (the worker is inside its event by then), then the connection drops.
    turns[crossing] = {**turns[crossing], "error": "drop_mid_stream", "delay_ms": 300}
    agent = make_agent(store, workspace, script(*turns, context_window=WINDOW), compact_while_answering=True)
    real = Compactor._event_in_batch

    def slow(self, *args, **kwargs):  # inside the event's store transaction
        if "while the model answered" in kwargs.get("trigger", ""):
            time.sleep(2.0)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Compactor, "_event_in_batch", slow)
    for n in range(1, crossing + 1):
        async for _ in agent.turn(f"question {n}: what are the lease ttls now?"):
            pass
    gaps: list[float] = []
    ticker = asyncio.ensure_future(_tick(gaps))
    await asyncio.sleep(0.02)
    errors = [e async for e in agent.turn("the crossing question") if isinstance(e, TurnError)]
    ticker.cancel()
    assert errors and "while the model answered" in str(
        [e.data["trigger"] for e in store.events(agent.session_id, "compaction") if e.data.get("state") == "done"]
    )
    assert max(gaps) < 1.0, f"the loop was held {max(gaps):.2f} s"


async def test_a_request_that_compacts_inside_it_is_built_off_the_event_loop(store, workspace, script, monkeypatch):
    """With the defaults the safety net's event runs inside the request that crossed it: the
    agent builds each request in a worker thread, so the loop (the TUI's keys and frames) is not
    held while it runs."""
    agent = make_agent(store, workspace, script(*_quick_turns(), context_window=WINDOW), approval="yolo")
    threads: list[bool] = []  # each event: on the loop's thread
    real = Compactor.event

    def where(self, *args, **kwargs):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Compactor, "event", where)
    for n in range(1, 31):
        async for _ in agent.turn(f"question {n}: what are the lease ttls now?"):
            pass
        if threads:
            break
    assert threads == [False], threads
