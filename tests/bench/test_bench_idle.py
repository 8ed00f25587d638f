"""Idle gaps: the `--idle` workload, the session format's `gap_s`, and the TTL-aware cost
(bench/cache_ttl.py) through the scorer on hand-built OUT files."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.cache_ttl import CACHE_TTL_S, OUTPUT_PRICE, TURN_SECONDS, bill, turn_times
from bench.score import score
from bench.sessionio import read_session, session_problems, write_session
from bench.workload import IDLE_CYCLE_S, IDLE_EVERY, generate, idle_gaps
from tests.bench.test_bench_score import ANSWERS, SYSTEM, TEN, TURNS, history, write_out


def test_idle_sessions_carry_the_same_messages_plus_pauses_past_every_short_ttl():
    plain, _ = generate("coding", 60, 3)
    idle, answers = generate("coding", 60, 3, idle=True)
    assert [line.get("messages") for line in idle] == [line.get("messages") for line in plain]
    gaps = {line["turn"]: line["gap_s"] for line in idle if "gap_s" in line}
    assert gaps == idle_gaps(60) and len(gaps) == len(range(12, 61, IDLE_EVERY))
    assert all(gap > max(CACHE_TTL_S.values()) for gap in gaps.values())
    assert answers["idle_gaps"] == {str(t): g for t, g in gaps.items()}
    assert session_problems(idle) == []
    assert generate("coding", 60, 3, idle=True) == (idle, answers)  # same arguments, same bytes


def test_every_hundred_turns_hold_each_kind_of_pause_once():
    assert sorted(idle_gaps(100).values()) == sorted(IDLE_CYCLE_S)


def test_a_negative_gap_is_a_session_problem():
    lines, _ = generate("chatty", 50, 1)
    lines[0] = {**lines[0], "gap_s": -5}
    assert any("gap_s" in p for p in session_problems(lines))


def _session(tmp_path, gaps: dict[int, float]):
    path = tmp_path / "s.jsonl"
    lines = [{"turn": t, **({"gap_s": gaps[t]} if t in gaps else {}), "messages": m} for t, m in TURNS.items()]
    write_session(path, lines, ANSWERS)
    return path


def _cost(tmp_path, gaps, extra=None):
    prompts = {t: [SYSTEM, *history(t)] for t in TURNS}
    out = write_out(tmp_path, prompts, extra=extra)
    return score(out, _session(tmp_path, gaps), window=10_000, output_reserve=0, count=TEN)["cost"]


SIZES = [30, 70, 90, 100, 130]  # ten tokens a message (TEN), the append-only prompts


def test_a_pause_past_the_ttl_bills_the_prefix_again(tmp_path):
    warm = _cost(tmp_path, {})
    cold = _cost(tmp_path, {3: 400})  # past Anthropic's 5 min, inside OpenAI's 10 min
    # Turn 3 reuses 70 tokens; cold, they are a cache write instead of a read.
    assert cold["anthropic"] == pytest.approx(warm["anthropic"] + 70 * (1.25 - 0.1))
    assert cold["openai"] == warm["openai"]
    assert cold["cache_ttl"]["cold_turns_anthropic"] == 1 and cold["cache_ttl"]["cold_tokens_anthropic"] == 70
    assert cold["cache_ttl"]["cold_turns_openai"] == 0
    assert warm["cache_ttl"]["cold_turns_anthropic"] == 0 and warm["cache_ttl"]["paused_s"] == 0


def test_keepalive_probes_keep_the_cache_and_are_priced(tmp_path):
    cold = _cost(tmp_path, {3: 400})
    kept = _cost(tmp_path, {3: 400}, extra={3: {"keepalive": [240.0]}})
    # One probe resends turn 2's 70-token prompt from the cache, plus a one-token answer.
    probe = 70 * 0.1 + OUTPUT_PRICE["anthropic"]
    assert kept["cache_ttl"]["keepalive_probes"] == 1
    assert kept["cache_ttl"]["keepalive_anthropic"] == pytest.approx(probe, abs=0.05)
    assert kept["cache_ttl"]["cold_turns_anthropic"] == 0
    assert kept["anthropic"] == pytest.approx(cold["anthropic"] - 70 * (1.25 - 0.1) + probe, abs=0.05)


def test_turn_times_follow_the_session_clock():
    assert turn_times([1, 2, 3], {2: 600}) == {1: 60.0, 2: 720.0, 3: 780.0}


def test_read_session_keeps_the_gaps(tmp_path):
    assert read_session(_session(tmp_path, {3: 400.5})).gaps == {3: 400.5}


@given(
    totals=st.lists(st.integers(0, 5000), min_size=1, max_size=30),
    data=st.data(),
)
def test_without_pauses_the_ttl_aware_bill_is_the_plain_formula(totals, data):
    turns = list(range(1, len(totals) + 1))
    cached = {t: data.draw(st.integers(0, total)) for t, total in zip(turns, totals, strict=True) if t > 1}
    result = bill("anthropic", turns, totals, cached, turn_times(turns, {}), {}, read=0.1, uncached=1.25)
    plain = 0.0
    for turn, total in zip(turns, totals, strict=True):
        hit = cached.get(turn, 0)
        plain += hit * 0.1 + (total - hit) * 1.25
    assert result.cost == plain and result.cold_turns == 0 and result.probes == 0
    assert min(CACHE_TTL_S.values()) > TURN_SECONDS


@given(gap=st.floats(0, 20_000), probes=st.lists(st.floats(1, 10_000), max_size=5))
def test_the_cache_is_warm_exactly_when_the_last_request_is_inside_the_ttl(gap, probes):
    times = turn_times([1, 2], {2: gap})
    offsets = sorted(p for p in probes if p < times[2] - times[1])
    result = bill("anthropic", [1, 2], [100, 150], {2: 100}, times, {2: offsets}, read=0.1, uncached=1.25)
    last = times[1] + (offsets[-1] if offsets else 0.0)
    assert (result.cold_turns == 1) == (times[2] - last >= CACHE_TTL_S["anthropic"])
    assert result.probes == len(offsets)
