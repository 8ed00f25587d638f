"""Compaction ahead of the turn: a removal the next turn would run inside its requests runs at the
agent's idle step after this one (always when it is certain; with `compact_ahead_on_growth` also
when the largest recent turn foresees it).

Why these tests: an event is 20-80 ms of CPU (benchmark B1, docs/latency.md); inside a turn it
sits between a tool's output and the next model call, at the idle step the user is reading. It
must run on the path the user runs (`Agent.maintain`, which the TUI and `myrm replay` call after
a turn), be the same kind of event (an emergency removal the panel and the bench see), be
reported by the first request that sends its result (the cache break it explains), and leave
every prompt inside the limit.
"""

from __future__ import annotations

import dataclasses

import pytest

from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.replay import ReplayOptions, replay
from tests.context.test_event_warmup import _turn

TURNS = 80
WINDOW = 24_000  # five removals in 80 turns (8k: one per turn, nothing to move)


GROWTH = dataclasses.replace(DEFAULT_CONFIG, compact_ahead_on_growth=True)


def _chat_turn(n: int) -> list[dict]:
    """A question and a long answer: the answer is what takes the prompt over a threshold."""
    answer = " ".join(f"point {n}.{i}: the lease ttl of service {i % 7} is {30 + n + i} seconds." for i in range(90))
    return [
        {"role": "user", "content": f"question {n}: what are the lease ttls now?"},
        {"role": "assistant", "content": answer},
    ]


def _events(config=GROWTH, turn=_turn) -> tuple[list[tuple[int, int, dict]], list[dict]]:
    """(turn, index of the assemble within the turn, event) for every reported event, and the
    OUT records."""
    lines = [{"turn": n, "messages": turn(n)} for n in range(1, TURNS + 1)]
    records = [r for r in replay(lines, ReplayOptions(window=WINDOW, config=config)) if "prompt" in r]
    reports = lambda r: [e for e in r["events"] if isinstance(e, dict) and "ladder" in e]  # noqa: E731
    found = [(r["turn"], i, e["event"]) for r in records for i, e in enumerate(reports(r)) if e.get("event")]
    return found, records


@pytest.mark.slow
def test_with_growth_the_idle_step_runs_the_removal_the_next_turn_would_run_inside_it():
    ahead, records = _events()
    inside, _ = _events(dataclasses.replace(GROWTH, compact_ahead=False))
    assert len(inside) >= 3, "the session must reach several removals"
    assert all(not e["trigger"].startswith("ahead") for _, _, e in inside)
    assert all(i > 0 for _, i, _ in inside), "without it the removals run inside a turn's later requests"
    ran_ahead = [(t, i) for t, i, e in ahead if e["trigger"].startswith("ahead")]
    # Most removals move to the idle step, each reported by the first request of the next turn.
    assert len(ran_ahead) >= 0.8 * len(ahead) and len(ran_ahead) >= 3, ahead
    assert all(i == 0 for _, i in ran_ahead)
    assert all(e["tier"] == "emergency" for _, _, e in ahead)
    # Earlier, not much more often: the largest recent turn is the margin.
    assert len(ahead) <= len(inside) + max(1, len(inside) // 4)
    limit = max(
        e["budget"]["prompt_limit"] for r in records for e in r["events"] if isinstance(e, dict) and "budget" in e
    )
    assert all(r["tokens"] <= limit for r in records)


@pytest.mark.slow
def test_a_removal_the_next_request_is_certain_to_run_runs_at_the_idle_step():
    """By default only the certain case: the answer took the prompt over the emergency threshold,
    so the next request would compact whatever it adds. Same events, same turns' prompts after
    them; only the moment moves (the first request of the next turn reports it either way)."""
    ahead, _ = _events(DEFAULT_CONFIG, _chat_turn)
    inside, _ = _events(dataclasses.replace(DEFAULT_CONFIG, compact_ahead=False), _chat_turn)
    assert len(inside) >= 3 and all(i == 0 and not e["trigger"].startswith("ahead") for _, i, e in inside)
    assert [t for t, _, _ in ahead] == [t for t, _, _ in inside]
    assert all(i == 0 and e["trigger"].startswith("ahead") for _, i, e in ahead)
