"""The economic trigger: an event once the reads paid above the floor reach one re-write."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.window import ladder
from myrm_tui.context.window.budget import budget_for
from myrm_tui.context.window.compaction_interval import GROWTH_WINDOW, SLOW_GROWTH_TOKENS, CompactionInterval
from myrm_tui.context.window.config import DEFAULT_CONFIG, EngineConfig
from myrm_tui.store import Store
from tests.context.test_engine_behaviour import Session, info

RATIO = DEFAULT_CONFIG.write_read_price_ratio


def test_due_once_excess_reads_cost_one_rewrite_and_reset_starts_over():
    interval = CompactionInterval()
    interval.reset(10_000)
    for _ in range(9):
        interval.note_request(20_000, target=5_000)  # 10k above the floor each time
    assert not interval.progress(5_000, RATIO) >= 1  # 90k re-read < 12.5 × 10k
    interval.note_request(45_000, target=5_000)
    assert interval.progress(5_000, RATIO) >= 1  # 125k re-read = one re-write of the 10k floor
    interval.reset(8_000)
    assert not interval.progress(5_000, RATIO) >= 1 and interval.floor == 8_000


def test_the_target_is_the_floor_before_any_event():
    interval = CompactionInterval()
    interval.note_request(3_000, target=5_000)  # under the target: nothing to remove, nothing counts
    assert interval.excess == 0
    interval.note_request(6_000, target=5_000)
    assert interval.excess == 1_000


@given(
    floor=st.integers(min_value=2_000, max_value=60_000),
    growth=st.integers(min_value=20, max_value=3_000),
)
def test_steady_growth_fires_at_the_cost_optimal_interval(floor, growth):
    """For growth g per request from floor F the rule fires at F + sqrt(2 · ratio · F · g), the
    interval that minimises re-reads plus re-writes, within the one request it overshoots by."""
    interval = CompactionInterval()
    interval.reset(floor)
    tokens = floor
    while not interval.progress(0, RATIO) >= 1:
        tokens += growth
        interval.note_request(tokens, target=0)
    optimum = math.sqrt(2 * RATIO * floor * growth)
    assert optimum - 2 * growth <= tokens - floor <= optimum + 2 * growth


def test_ladder_runs_the_removal_event_when_due_but_never_past_the_limit():
    budget = budget_for(64_000, 4_096)
    kwargs: dict[str, Any] = dict(
        budget=budget, config=DEFAULT_CONFIG, cache_warm=True, force_tier=None, recent_savings={}
    )
    due = ladder.decide(tokens=int(0.45 * budget.prompt_limit), economic_due=True, **kwargs)
    assert due.run == "emergency" and due.why.startswith("economic")
    assert ladder.decide(tokens=int(0.45 * budget.prompt_limit), **kwargs).run is None
    over = ladder.decide(tokens=int(0.95 * budget.prompt_limit), economic_due=True, **kwargs)
    assert over.run == "emergency" and not over.why.startswith("economic")


def _slow_chat(store, config: EngineConfig) -> list[dict]:
    """A chat that grows by one short exchange per request, the cache always warm; the reports."""
    s = Session(store, config=config)
    reports = []
    for n in range(1, 120):
        s.add({"role": "user", "content": f"question {n}: " + "why " * 60}, {"role": "assistant", "content": "a" * 600})
        s.now = float(n)
        s.engine.note_provider_call(at=s.now - 0.5)
        reports.append(s.assemble(model=info(16_000)).report)
    return reports


def test_a_slow_chat_compacts_before_the_emergency_and_keeps_a_smaller_prompt(store, tmp_path):
    on = _slow_chat(store, EngineConfig(economic_trigger=True))
    economic = [r for r in on if r["event"] is not None and str(r["ladder"]["action"]).startswith("economic")]
    assert economic, "the slow chat never reached the economic trigger"
    limit = on[0]["budget"]["prompt_limit"]
    assert all(r["event"]["tokens_before"] < DEFAULT_CONFIG.emergency_ratio * limit for r in economic)
    (tmp_path / "off").mkdir()
    with Store.open(tmp_path / "off") as other:
        off = _slow_chat(other, EngineConfig(economic_trigger=False))
    mean = lambda reports: sum(r["budget"]["history_tokens"] for r in reports) / len(reports)  # noqa: E731
    assert mean(on) < mean(off)


# ---------------------------------------------------------------- the gate: slow growth only
def _grown(steps: list[int], start: int = 10_000, requests_per_turn: int = 1) -> CompactionInterval:
    """An interval that saw one request per step, each `step` tokens above the one before, in
    user turns of `requests_per_turn` requests."""
    interval = CompactionInterval()
    tokens = start
    interval.note_request(tokens, target=0, turn=0)
    for n, step in enumerate(steps, start=1):
        tokens += step
        interval.note_request(tokens, target=0, turn=n // requests_per_turn)
    return interval


def test_the_gate_opens_only_after_a_full_window_of_slow_turns():
    assert not _grown([100] * (GROWTH_WINDOW - 1)).slow(), "too few requests measured to call it slow"
    assert _grown([100] * GROWTH_WINDOW).slow()
    assert not _grown([SLOW_GROWTH_TOKENS] * GROWTH_WINDOW).slow(), "the threshold itself is not slow"
    # A tool-heavy stretch closes it again, and it reopens once the window holds only chat.
    interval = _grown([100] * GROWTH_WINDOW + [5 * SLOW_GROWTH_TOKENS] * 5)
    assert not interval.slow()
    tokens = interval.last or 0
    for n in range(GROWTH_WINDOW):
        tokens += 100
        interval.note_request(tokens, target=0, turn=1_000 + n)
    assert interval.slow()


def test_growth_is_per_user_turn_not_per_request():
    """Steps of one turn that each add little (a tool call, then its output) add up: a turn of
    four requests of a third of the threshold each grows faster than a chat turn may."""
    step = SLOW_GROWTH_TOKENS // 3
    assert _grown([step] * GROWTH_WINDOW, requests_per_turn=1).slow()
    assert not _grown([step] * GROWTH_WINDOW, requests_per_turn=4).slow()
    one_long_turn = CompactionInterval()
    for n in range(GROWTH_WINDOW + 1):
        one_long_turn.note_request(10_000 + 50 * n, target=0, turn=7)
    assert one_long_turn.growth_per_turn() == 50 * GROWTH_WINDOW, "one agentic turn is one turn"


def test_an_event_is_not_a_growth_sample():
    """The drop an event makes and the step to the next request (two token scales) are skipped."""
    interval = _grown([100] * GROWTH_WINDOW)
    interval.reset(2_000)
    interval.note_request(2_000 + 10 * SLOW_GROWTH_TOKENS, target=0, turn=GROWTH_WINDOW + 1)
    assert interval.slow() and max(g for g, _ in interval.growth) == 100


@given(
    steps=st.lists(st.integers(min_value=-5_000, max_value=5_000), min_size=GROWTH_WINDOW, max_size=3 * GROWTH_WINDOW),
    requests_per_turn=st.integers(min_value=1, max_value=6),
)
def test_the_gate_is_the_growth_per_turn_of_the_last_window(steps, requests_per_turn):
    """Shrinking requests count as no growth; only the last `GROWTH_WINDOW` requests count,
    divided by the user turns they belong to."""
    recent = [max(0, s) for s in steps[-GROWTH_WINDOW:]]
    numbers = range(len(steps) - GROWTH_WINDOW + 1, len(steps) + 1)
    turns = len({n // requests_per_turn for n in numbers})
    interval = _grown(steps, start=50_000, requests_per_turn=requests_per_turn)
    assert interval.slow() == (sum(recent) / turns < SLOW_GROWTH_TOKENS)


def _tool_session(store, config: EngineConfig, turns: int = 80) -> list[dict]:
    """A session whose every request brings a tool output (fast growth), the cache always warm."""
    s = Session(store, config=config)
    reports = []
    for n in range(1, turns):
        s.turn(n, output_chars=3_000)  # ~1.4k tokens a request: without the gate, 3 economic events
        s.now = float(n)
        s.engine.note_provider_call(at=s.now - 0.5)
        reports.append(s.assemble(model=info(64_000)).report)
    return reports


def test_a_fast_growing_session_never_takes_the_economic_event(store, tmp_path):
    """The same session with the trigger on and off makes the same events: the gate keeps it shut
    though the reads above the floor pass one re-write long before the emergency."""
    on = _tool_session(store, EngineConfig(economic_trigger=True))
    assert any(r["event"] is not None for r in on), "the session reached the emergency"
    assert not any(str(r["ladder"]["action"]).startswith("economic") for r in on)
    (tmp_path / "off").mkdir()
    with Store.open(tmp_path / "off") as other:
        off = _tool_session(other, EngineConfig(economic_trigger=False))
    assert [r["budget"]["history_tokens"] for r in on] == [r["budget"]["history_tokens"] for r in off]


# ----------------------------------------------------------------------------- compaction ahead


def _ahead(tokens: int, growth: int | None, *, due: bool = False, config: EngineConfig = DEFAULT_CONFIG, warm=True):
    budget = budget_for(10_000, 0)
    now = ladder.decide(
        tokens=tokens, budget=budget, config=config, cache_warm=warm, force_tier=None, recent_savings={}
    )
    return ladder.decide_ahead(
        now=now, tokens=tokens, turn_growth=growth, budget=budget, config=config, economic_due_next=due
    )


GROWTH = dataclasses.replace(DEFAULT_CONFIG, compact_ahead_on_growth=True)


def test_what_the_ladder_runs_on_the_prompt_as_it_is_runs_ahead_of_the_next_turn():
    limit = budget_for(10_000, 0).prompt_limit
    at = math.ceil(limit * DEFAULT_CONFIG.emergency_ratio)
    decision = _ahead(at, None)
    assert decision is not None and decision.run == ladder.EMERGENCY
    assert decision.why.startswith("ahead of the next turn: ")
    full = math.ceil(limit * DEFAULT_CONFIG.full_ratio)
    assert _ahead(full, None) is None  # deferred while the cache is warm: the next request may be too
    cold = _ahead(full, None, warm=False)  # a cold cache stays cold until the next request
    assert cold is not None and cold.run == ladder.FULL
    assert _ahead(at - 1, None) is None and _ahead(at - 1, 10_000) is None  # growth: off by default
    off = dataclasses.replace(DEFAULT_CONFIG, compact_ahead=False)
    assert _ahead(at, None, config=off) is None


def test_with_growth_an_event_runs_ahead_when_the_largest_recent_turn_would_cross_the_threshold():
    limit = budget_for(10_000, 0).prompt_limit
    below = math.ceil(limit * DEFAULT_CONFIG.emergency_ratio) - 1_000
    assert _ahead(below, 999, config=GROWTH) is None  # the next turn, however large recently, stays under
    decision = _ahead(below, 1_000, config=GROWTH)
    assert decision is not None and decision.run == ladder.EMERGENCY and not decision.economic
    assert decision.why.startswith("ahead of the next turn")
    assert _ahead(below, None, config=GROWTH) is None  # no turn measured yet: nothing to foresee with
    off = dataclasses.replace(GROWTH, compact_ahead=False)
    assert _ahead(below, 1_000, config=off) is None and _ahead(below, None, due=True, config=off) is None


def test_an_economic_event_runs_ahead_when_the_next_request_makes_it_due():
    limit = budget_for(10_000, 0).prompt_limit
    decision = _ahead(int(limit * 0.6), None, due=True)
    assert decision is not None and decision.economic and decision.run == ladder.EMERGENCY
    assert _ahead(int(limit * 0.6), None, due=False) is None


def test_the_largest_turn_growth_sums_each_turns_requests():
    interval = CompactionInterval()
    for tokens, turn in [(1_000, 1), (1_500, 1)]:
        interval.note_request(tokens, target=0, turn=turn)
    assert interval.largest_turn_growth() is None  # one turn measured (the first request has no growth)
    for tokens, turn in [(1_600, 2), (4_000, 2), (4_300, 3)]:
        interval.note_request(tokens, target=0, turn=turn)
    assert interval.largest_turn_growth() == 2_500  # turn 2: 100 + 2,400; turn 1: 500; turn 3: 300


@given(st.lists(st.integers(0, 50_000), min_size=1, max_size=30), st.integers(0, 50_000), st.integers(1, 20_000))
def test_progress_after_is_progress_once_that_request_is_noted(requests, tokens, target):
    interval = CompactionInterval()
    interval.reset(8_000)
    for r in requests:
        interval.note_request(r, target=target)
    predicted = interval.progress_after(tokens, target, RATIO)
    interval.note_request(tokens, target=target)
    assert math.isclose(predicted, interval.progress(target, RATIO))
