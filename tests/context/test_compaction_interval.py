"""The economic trigger: an event once the reads paid above the floor reach one re-write."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from test_engine_behaviour import Session, info

from myrm_tui.context import ladder
from myrm_tui.context.budget import budget_for
from myrm_tui.context.compaction_interval import CompactionInterval
from myrm_tui.context.config import DEFAULT_CONFIG, EngineConfig
from myrm_tui.store import Store

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
    kwargs = dict(budget=budget, config=DEFAULT_CONFIG, cache_warm=True, force_tier=None, recent_savings={})
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
        off = _slow_chat(other, DEFAULT_CONFIG)  # off by default (config.py says why)
    mean = lambda reports: sum(r["budget"]["history_tokens"] for r in reports) / len(reports)  # noqa: E731
    assert mean(on) < mean(off)
