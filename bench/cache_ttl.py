"""The cost model's clock: a cached prefix only counts while the provider still holds it.

Why: B5 prices the common prefix of two consecutive requests at the cache-read rate. That holds
only if the second request comes within the provider's cache lifetime of the first; after a
user's pause past it (a session's `gap_s`, docs/replay-format.md) the whole prompt is billed
again (a cache write on Anthropic, the plain rate on OpenAI). Sessions without pauses have one
turn a minute, inside every TTL, so their cost is unchanged by this module.

Keep-alive probes (the replay's `keepalive` list, agent/cache_warmth.py) are requests too: each
resends the previous prompt, read from the cache if it was still warm, and restarts the TTL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

# The replay format's cadence: turn t is sent t minutes after the origin plus every pause
# (`gap_s`) up to and including its own (myrm_tui/replay.py TURN_SECONDS, the same for every contender).
TURN_SECONDS = 60.0
# Provider cache lifetimes, seconds: Anthropic's default ephemeral cache (5 min), OpenAI's
# automatic prefix cache (5-10 min of inactivity; the upper end, so the model never over-charges).
CACHE_TTL_S = {"anthropic": 300.0, "openai": 600.0}
# Output price relative to one uncached input token (Claude Sonnet $15 vs $3; GPT-4o $10 vs $2.50):
# only the keep-alive's 1-token answers are priced with it (turn outputs are the same for every contender).
OUTPUT_PRICE = {"anthropic": 5.0, "openai": 4.0}
PROBE_OUTPUT_TOKENS = 1


def turn_times(turns: Iterable[int], gaps: Mapping[int, float]) -> dict[int, float]:
    """Seconds since the origin at which each turn's request goes out."""
    paused = 0.0
    times = {}
    for turn in sorted(set(turns) | set(gaps)):
        paused += float(gaps.get(turn, 0.0))
        times[turn] = turn * TURN_SECONDS + paused
    return times


@dataclass
class Bill:
    """One provider's input bill for a run, in uncached-input-token units."""

    cost: float = 0.0
    cold_turns: int = 0  # turns whose previous request was older than the TTL
    cold_tokens: int = 0  # prefix tokens billed again because of it
    probes: int = 0
    probe_cost: float = 0.0


def bill(
    provider: str,
    turns: Sequence[int],
    totals: Sequence[int],
    cached: Mapping[int, int],
    times: Mapping[int, float],
    keepalive: Mapping[int, Sequence[float]],
    *,
    read: float,
    uncached: float,
    cacheable: Callable[[int], int] = lambda tokens: tokens,
) -> Bill:
    """Price each turn's prompt: `cached[turn]` tokens at `read` if a request went out within
    the TTL before it, else all at `uncached`. `keepalive[turn]`: probes sent during the pause
    before `turn`, in seconds after the previous turn's request."""
    ttl = CACHE_TTL_S[provider]
    result = Bill()
    previous_at: float | None = None
    previous_total = 0
    for turn, total in zip(turns, totals, strict=True):
        last = previous_at
        for offset in keepalive.get(turn, ()) if previous_at is not None else ():
            at = previous_at + float(offset)  # type: ignore[operator]  # checked just above
            hit = cacheable(previous_total) if last is not None and at - last < ttl else 0
            probe = hit * read + (previous_total - hit) * uncached + PROBE_OUTPUT_TOKENS * OUTPUT_PRICE[provider]
            result.probes += 1
            result.probe_cost += probe
            last = at
        now = times.get(turn, turn * TURN_SECONDS)
        hit = cached.get(turn, 0)
        if hit and last is not None and now - last >= ttl:
            result.cold_turns += 1
            result.cold_tokens += hit
            hit = 0
        result.cost += hit * read + (total - hit) * uncached
        previous_at, previous_total = now, total
    result.cost += result.probe_cost
    return result
