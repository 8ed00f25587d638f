"""Two-phase prompt-cache break detection and a per-session learned cache TTL.

Why two phases: stage 12 (`cache_optimize`) can only *predict* a cache hit from what we send (the
prompt extends the previous one, the cache was used recently enough). Whether the provider really
served the prefix from its cache is known only after the call, from the usage it reports
(`cached_read_tokens`). Comparing the two separates the breaks we caused and explained (a
compaction, a system prompt change) from the ones we did not see coming: the provider's TTL is
shorter than our table says, it evicted the entry early, or the request was routed to a machine
without it. Those unexpected breaks are what `CacheWatch.warm` gets wrong, so they also teach the
engine a better TTL for this session and provider (`learn_ttl`).

Some providers never report cache figures (or report 0 for everything): a 0 from them proves
nothing. So no verdict is drawn for a provider until it has reported a cache read or write at
least once in this session; the recorded replay's provider never does, so replays learn nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# Below this many tokens providers do not cache a prefix at all (Anthropic's and OpenAI's minimum
# cacheable prompt is 1024 tokens), so a prefix this small predicts no hit, and a read this small
# is not one.
MIN_CACHEABLE_TOKENS = 1024
# A read of at least this share of the expected prefix counts as a hit: providers cache in blocks
# (OpenAI in 128-token steps, Anthropic only up to the last marker), so a hit reads somewhat less
# than our prefix estimate, while a real break reads ~nothing.
HIT_SHARE = 0.5
# The learned TTL never drops below this: one unexpected break caused by eviction or routing (not
# the TTL) must not make the engine treat every cache as cold after a coffee-break-free minute.
TTL_FLOOR_S = 60.0
# Nor rises above this: the longest cache lifetime any provider sells (Anthropic's 1-hour cache,
# DeepSeek's and Gemini's implicit caches are of that order); a hit after a longer gap was a lucky
# keep-alive, not a TTL.
TTL_CAP_S = 3600.0
# An unexpected break after gap g puts the estimate this far below g: the TTL was shorter than g,
# and an estimate of exactly g would call the same gap warm again.
BELOW_GAP = 0.9

VerdictKind = Literal["hit", "break", "unexpected-break", "unexpected-hit"]


@dataclass(frozen=True)
class CachePrediction:
    """Phase 1, taken when the prompt is assembled (before the call)."""

    provider: str  # the cache-TTL key (`family.provider_of`)
    gap_s: float | None  # seconds since the previous request went out; None for the first one
    warm: bool  # the engine's belief: the provider still holds the previous request's prefix
    repeated_share: float  # share of the previous request this one repeats: 1 extends it, 0 nothing


@dataclass(frozen=True)
class CacheVerdict:
    """Phase 2: the prediction against what the provider reported (stored as a `cache_verdict` event)."""

    kind: VerdictKind
    provider: str
    expected_tokens: int  # the unchanged prefix we expected to be read from the cache (0: none)
    reported_tokens: int  # what the provider says it read from the cache
    gap_s: float | None
    cause: str

    @property
    def unexpected(self) -> bool:
        return self.kind.startswith("unexpected")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "provider": self.provider,
            "expected_tokens": self.expected_tokens,
            "reported_tokens": self.reported_tokens,
            "gap_s": None if self.gap_s is None else round(self.gap_s, 3),
            "cause": self.cause,
        }


def expected_cached_tokens(prediction: CachePrediction, previous_prompt_tokens: int) -> int:
    """The tokens of the unchanged prefix, from the previous call's reported prompt size.

    By message share, not per-message tokens: the report of the previous call is the only exact
    size we have, and a break's position is in messages."""
    share = min(1.0, max(0.0, prediction.repeated_share))
    return int(previous_prompt_tokens * share)


def classify(prediction: CachePrediction, previous_prompt_tokens: int, cached_read: int) -> CacheVerdict:
    expected = expected_cached_tokens(prediction, previous_prompt_tokens)
    predicted_hit = prediction.warm and expected >= MIN_CACHEABLE_TOKENS
    reported_hit = cached_read >= MIN_CACHEABLE_TOKENS and cached_read >= HIT_SHARE * expected
    gap = "?" if prediction.gap_s is None else f"{prediction.gap_s:.0f}s"
    if predicted_hit and reported_hit:
        kind: VerdictKind = "hit"
        cause = "prefix read from the cache as predicted"
    elif predicted_hit:
        kind = "unexpected-break"
        cause = f"provider cached ~nothing after {gap}: TTL expiry, eviction or routing"
    elif reported_hit:
        kind = "unexpected-hit"
        cause = f"provider still held the prefix after {gap}"
    else:
        kind = "break"
        cause = "cold as predicted (gap past the TTL, prefix changed or too small)"
    return CacheVerdict(kind, prediction.provider, expected, cached_read, prediction.gap_s, cause)


def learn_ttl(estimate: float, verdict: CacheVerdict, floor: float = TTL_FLOOR_S, cap: float = TTL_CAP_S) -> float:
    """The TTL estimate after one verdict, kept within [floor, cap].

    A hit after gap g proves TTL >= g (raise to at least g); an unexpected break after g below the
    estimate proves TTL < g (lower below g). Other verdicts say nothing new about the TTL."""
    estimate = min(cap, max(floor, estimate))
    gap = verdict.gap_s
    if gap is None:
        return estimate
    if verdict.kind in ("hit", "unexpected-hit"):
        return min(cap, max(estimate, gap))
    if verdict.kind == "unexpected-break" and gap < estimate:
        return max(floor, min(estimate, gap * BELOW_GAP))
    return estimate


@dataclass
class CacheObserver:
    """The engine's memory between the two phases, and what it learned (one per session)."""

    learned_ttl: dict[str, float] = field(default_factory=dict)  # provider → TTL estimate, seconds
    reporting: set[str] = field(default_factory=set)  # providers seen reporting cache figures
    pending: CachePrediction | None = None
    previous_prompt_tokens: int = 0  # the last call's reported prompt size (the prefix the next may reuse)
    last_verdict: CacheVerdict | None = None

    def ttl(self, provider: str, table: dict[str, int]) -> float:
        """The learned TTL when there is one, else the table's."""
        learned = self.learned_ttl.get(provider)
        return learned if learned is not None else float(table.get(provider, table["default"]))

    def predict(self, prediction: CachePrediction | None) -> None:
        """Phase 1 for the request about to go out (None: the first, nothing to compare)."""
        self.pending = prediction

    def observe(
        self, prompt_tokens: int, cached_read: int, cached_write: int, table: dict[str, int]
    ) -> CacheVerdict | None:
        """Phase 2 for the pending prediction: a verdict, or None when nothing can be concluded
        (no prediction, no previous size, or a provider that has never reported cache figures)."""
        prediction, self.pending = self.pending, None
        previous, self.previous_prompt_tokens = self.previous_prompt_tokens, prompt_tokens
        if prediction is None:
            return None
        if cached_read > 0 or cached_write > 0:
            self.reporting.add(prediction.provider)
        if prediction.provider not in self.reporting or previous <= 0:
            return None
        verdict = classify(prediction, previous, cached_read)
        provider = prediction.provider
        learned = learn_ttl(self.ttl(provider, table), verdict)
        if learned != self.ttl(provider, table):
            self.learned_ttl[provider] = learned
        self.last_verdict = verdict
        return verdict
