"""The threshold ladder: which tier (if any) runs now, or why it waits.

Pure function of the numbers, so the decision is testable and explained in every report.
Hot-cache bypass: below the emergency tier, history is not rewritten while the provider cache is
warm (rewriting would re-bill the whole prefix); the deferred tier runs once the cache is cold
(the cache-TTL prune stage) or the budget demands it. Anti-thrash: a tier whose last two runs
each saved less than `min_save_ratio` of the budget is skipped until the next tier is reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.config import EngineConfig

NONE, MONITOR, LIGHT, FULL, EMERGENCY = "none", "monitor", "light", "full", "emergency"


@dataclass(frozen=True)
class Decision:
    tier: str  # where utilization sits on the ladder
    run: str | None  # the tier to run now
    why: str
    deferred: str | None = None  # a tier that waits for the cache to go cold
    economic: bool = False  # run by the economic trigger (compaction_interval.py), not a threshold


def tier_for(utilization: float, config: EngineConfig) -> str:
    if utilization >= config.emergency_ratio:
        return EMERGENCY
    if utilization >= config.full_ratio:
        return FULL
    if utilization >= config.light_ratio:
        return LIGHT
    if utilization >= config.monitor_ratio:
        return MONITOR
    return NONE


def _thrashing(savings: Sequence[int], budget: Budget, config: EngineConfig) -> bool:
    recent = list(savings)[-2:]
    floor = budget.prompt_limit * config.min_save_ratio
    return len(recent) == 2 and all(s < floor for s in recent)


def decide(
    *,
    tokens: int,
    budget: Budget,
    config: EngineConfig,
    cache_warm: bool,
    force_tier: str | None,
    recent_savings: Mapping[str, Sequence[int]],
    economic_due: bool = False,
) -> Decision:
    """`economic_due`: the reads paid since the last event have reached one re-write
    (`compaction_interval.py`); the removal event runs now, whatever the cache's state."""
    limit = max(1, budget.prompt_limit)
    utilization = tokens / limit
    tier = tier_for(utilization, config)
    if force_tier:
        return Decision(tier, force_tier, "forced")
    if economic_due and tier != EMERGENCY and tokens <= limit:
        why = f"economic: {utilization:.0%}, re-reads since the last event ≥ one re-write"
        return Decision(tier, EMERGENCY, why, economic=True)
    if tier in (NONE, MONITOR):
        return Decision(tier, None, "under the light threshold" if tier == NONE else "monitoring")
    if tier != EMERGENCY and (cache_warm or not config.cache_ttl_prune) and tokens <= limit:
        why = "deferred: provider cache is warm" if cache_warm else "deferred: cache-TTL prune is off"
        return Decision(tier, None, why, deferred=tier)
    if tier != EMERGENCY and _thrashing(recent_savings.get(tier, ()), budget, config):
        return Decision(tier, None, f"skipped: last {tier} runs saved too little", deferred=tier)
    return Decision(tier, tier, run_reason(tier, tokens, limit, config, cache_warm))


def decide_ahead(
    *,
    now: Decision,
    tokens: int,
    turn_growth: int | None,
    budget: Budget,
    config: EngineConfig,
    economic_due_next: bool,
) -> Decision | None:
    """Whether the compaction the next turn would run inside its requests runs now, at the idle
    step before it (None: it waits). Certain cases only, by default: the ladder already runs a
    tier on the prompt as it is (`now`, the answer took it there; the next request only adds to
    it, and a cache can only go cold meanwhile), or the next request makes the economic trigger
    due (`economic_due_next`, `CompactionInterval.progress_after`). Foreseen ones with
    `compact_ahead_on_growth`: the prompt plus the most a recent user turn added (`turn_growth`,
    `CompactionInterval.largest_turn_growth`) reaches the emergency threshold. The event is the one the ladder would
    run; only the moment moves."""
    if not config.compact_ahead:
        return None
    if now.run is not None:
        return replace(now, why=f"ahead of the next turn: {now.why}")
    limit = max(1, budget.prompt_limit)
    share = tokens / limit
    if economic_due_next and now.tier != EMERGENCY and tokens <= limit:
        return Decision(
            now.tier, EMERGENCY, f"ahead, economic: {share:.0%}, the next request's re-read is due", economic=True
        )
    if not config.compact_ahead_on_growth or turn_growth is None:
        return None
    if (tokens + turn_growth) / limit < config.emergency_ratio:
        return None
    why = f"ahead of the next turn: {share:.0%} + {turn_growth / limit:.0%} a turn ≥ {config.emergency_ratio:.0%}"
    return Decision(now.tier, EMERGENCY, why)


def run_reason(tier: str, tokens: int, limit: int, config: EngineConfig, cache_warm: bool) -> str:
    """Why `tier` runs, in the numbers that decided it. An automatic run below the limit used to
    say "over budget" whenever the cache was warm; the panel then labelled every compaction of
    an active session `emergency · over budget` at 91 %."""
    share = tokens / max(1, limit)
    if tokens > limit:
        return f"over budget: {share:.0%} of the prompt limit"
    threshold = {LIGHT: config.light_ratio, FULL: config.full_ratio, EMERGENCY: config.emergency_ratio}.get(tier)
    reached = f"{share:.0%} ≥ {threshold:.0%}" if threshold is not None else f"{share:.0%}"
    # Below emergency a warm cache defers the run, so a warm run is always the emergency tier.
    return f"{reached}, cache {'warm' if cache_warm else 'cold'}"
