"""Two-phase cache-break verdicts and the learned TTL (context/cache_observer.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.cache_observer import (
    TTL_CAP_S,
    TTL_FLOOR_S,
    CacheObserver,
    CachePrediction,
    CacheVerdict,
    classify,
    learn_ttl,
)
from myrm_tui.context.window.config import CACHE_TTL_S

WARM = CachePrediction("anthropic", 120.0, True, 1.0)


def test_verdicts_cover_the_four_cases():
    assert classify(WARM, 10_000, 9_800).kind == "hit"
    miss = classify(WARM, 10_000, 0)
    assert miss.kind == "unexpected-break" and miss.unexpected and miss.expected_tokens == 10_000
    cold = CachePrediction("anthropic", 900.0, False, 1.0)
    assert classify(cold, 10_000, 0).kind == "break"
    assert classify(cold, 10_000, 9_000).kind == "unexpected-hit"


def test_a_predicted_break_expects_only_the_unchanged_prefix():
    # The prompt changed at message 5 of 10: half the previous request can come from the cache.
    half = CachePrediction("openai", 30.0, True, 0.5)
    verdict = classify(half, 10_000, 4_800)
    assert verdict.expected_tokens == 5_000 and verdict.kind == "hit"
    # A prefix below the providers' minimum cacheable size predicts no hit.
    assert classify(CachePrediction("openai", 30.0, True, 0.05), 10_000, 0).kind == "break"


def test_nothing_is_concluded_for_a_provider_that_never_reports_cache_figures():
    observer = CacheObserver()
    observer.predict(None)
    assert observer.observe(10_000, 0, 0, CACHE_TTL_S) is None  # the first call: nothing to compare
    for _ in range(3):
        observer.predict(WARM)
        assert observer.observe(10_000, 0, 0, CACHE_TTL_S) is None
    assert observer.learned_ttl == {} and observer.ttl("anthropic", CACHE_TTL_S) == CACHE_TTL_S["anthropic"]


def test_an_unexpected_break_lowers_the_ttl_below_the_gap_and_a_late_hit_raises_it():
    observer = CacheObserver()
    observer.predict(None)
    observer.observe(10_000, 0, 10_000, CACHE_TTL_S)  # the provider writes the cache: it reports figures
    observer.predict(WARM)
    verdict = observer.observe(10_500, 0, 10_500, CACHE_TTL_S)
    assert verdict is not None and verdict.kind == "unexpected-break"
    assert TTL_FLOOR_S <= observer.ttl("anthropic", CACHE_TTL_S) < 120.0
    observer.predict(CachePrediction("anthropic", 1_500.0, False, 1.0))
    verdict = observer.observe(11_000, 10_400, 0, CACHE_TTL_S)
    assert verdict is not None and verdict.kind == "unexpected-hit"
    assert observer.ttl("anthropic", CACHE_TTL_S) == 1_500.0
    assert observer.ttl("openai", CACHE_TTL_S) == CACHE_TTL_S["openai"]  # learned per provider


KINDS = st.sampled_from(["hit", "break", "unexpected-break", "unexpected-hit"])
SECONDS = st.floats(min_value=0.0, max_value=10 * TTL_CAP_S, allow_nan=False)


def _verdict(kind: str, gap: float | None) -> CacheVerdict:
    return CacheVerdict(kind, "anthropic", 5_000, 0, gap, "test")  # type: ignore[arg-type]


@given(st.floats(min_value=0.0, max_value=20 * TTL_CAP_S, allow_nan=False), KINDS, st.one_of(st.none(), SECONDS))
def test_the_estimate_stays_within_floor_and_cap(estimate, kind, gap):
    assert TTL_FLOOR_S <= learn_ttl(estimate, _verdict(kind, gap)) <= TTL_CAP_S


@given(st.floats(min_value=TTL_FLOOR_S, max_value=TTL_CAP_S), SECONDS)
def test_reactions_are_monotone(estimate, gap):
    for hit in ("hit", "unexpected-hit"):
        raised = learn_ttl(estimate, _verdict(hit, gap))
        assert raised >= estimate and raised >= min(gap, TTL_CAP_S)
    lowered = learn_ttl(estimate, _verdict("unexpected-break", gap))
    assert lowered <= estimate
    if gap < estimate:
        assert lowered < gap or lowered == TTL_FLOOR_S
    assert learn_ttl(estimate, _verdict("break", gap)) == estimate


@given(st.floats(min_value=TTL_FLOOR_S, max_value=TTL_CAP_S), SECONDS, SECONDS)
def test_a_larger_gap_never_learns_a_smaller_ttl(estimate, g1, g2):
    small, large = sorted((g1, g2))
    for kind in ("hit", "unexpected-break"):
        assert learn_ttl(estimate, _verdict(kind, small)) <= learn_ttl(estimate, _verdict(kind, large))
