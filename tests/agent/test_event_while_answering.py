"""The safety net's event while the model answers, on the path the user runs (`Agent.turn`).

Why: the event a crossing request owes (the `emergency_while_answering` setting) is only off the
user's wait if the agent sends the request first and runs the event in a worker thread while the
provider answers, and finishes it before the answer is stored (the store's transaction and the
engine's lock would otherwise hold the event loop). The provider must have received the whole
history in that request, and the next request the compacted one.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from myrm_tui.agent.events import AssistantMessageStored, StepStarted
from myrm_tui.context.compaction.compactor import Compactor
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import make_agent

WINDOW = 16_000
THINK_MS = 300  # the provider's time to its first token: the event runs inside it


def _answer(n: int) -> str:
    return " ".join(f"point {n}.{i}: the lease ttl of service {i % 7} is {30 + n + i} seconds." for i in range(25))


async def test_the_crossing_request_goes_out_whole_and_its_event_runs_in_a_thread_while_the_model_answers(
    store, workspace, script, monkeypatch, tmp_path
):
    # No prompt count from the provider: the ladder then reads our own count (`usage_ratio` 1).
    usage = {"prompt_tokens": 0, "completion_tokens": 100}
    turns = [{"text": _answer(n), "chunk_size": 1_000_000, "delay_ms": THINK_MS, "usage": usage} for n in range(1, 31)]
    model = script(*turns, context_window=WINDOW, record="requests.jsonl")
    agent = make_agent(store, workspace, model, approval="yolo", emergency_while_answering=True)
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
