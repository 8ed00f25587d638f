"""The threshold ladder: which tier (if any) runs now, or why it waits.

Pure function of the numbers, so the decision is testable and explained in every report.
Hot-cache bypass: below the emergency tier, history is not rewritten while the provider cache is
warm (rewriting would re-bill the whole prefix); the deferred tier runs once the cache is cold
(the cache-TTL prune stage) or the budget demands it. Anti-thrash: a tier whose last two runs
each saved less than `min_save_ratio` of the budget is skipped until the next tier is reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from myrm_tui.context.budget import Budget
from myrm_tui.context.config import EngineConfig

NONE, MONITOR, LIGHT, FULL, EMERGENCY = "none", "monitor", "light", "full", "emergency"


@dataclass(frozen=True)
class Decision:
    tier: str  # where utilization sits on the ladder
    run: str | None  # the tier to run now
    why: str
    deferred: str | None = None  # a tier that waits for the cache to go cold


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


def decide(*, tokens: int, budget: Budget, config: EngineConfig, cache_warm: bool,
           force_tier: str | None, recent_savings: Mapping[str, Sequence[int]]) -> Decision:
    limit = max(1, budget.prompt_limit)
    utilization = tokens / limit
    tier = tier_for(utilization, config)
    if force_tier:
        return Decision(tier, force_tier, "forced")
    if tier in (NONE, MONITOR):
        return Decision(tier, None, "under the light threshold" if tier == NONE else "monitoring")
    if tier != EMERGENCY and cache_warm and tokens <= limit:
        return Decision(tier, None, "deferred: provider cache is warm", deferred=tier)
    if tier != EMERGENCY and _thrashing(recent_savings.get(tier, ()), budget, config):
        return Decision(tier, None, f"skipped: last {tier} runs saved too little", deferred=tier)
    return Decision(tier, tier, "cache cold" if not cache_warm else "over budget")
