"""Per-session circuit breakers for engine stages.

Why per session (not process-global): one pathological session must not disable a
stage for every other session in the same process. A stage that raises `threshold` times in a
row is skipped for the rest of the session; the turn goes on without it. A trip is news for the
user (compaction or filtering just stopped for this session): `take_trips` hands each one out
once, for the agent to show as a notice.

The stages that run only inside a compaction event (`pipeline.TIMED_BY_BREAKER`) are timed here,
where they are called, on the clock the engine lends for one assemble.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TypeVar

from myrm_tui.context.pipeline import TIMED_BY_BREAKER
from myrm_tui.context.report import StageClock

T = TypeVar("T")


@dataclass
class StageBreakers:
    threshold: int = 3
    failures: dict[str, int] = field(default_factory=dict)
    disabled: dict[str, str] = field(default_factory=dict)  # stage → last error
    newly_disabled: list[str] = field(default_factory=list)  # tripped, not yet taken by `take_trips`
    clock: StageClock | None = None  # set by the engine for the length of one assemble

    def run(self, stage: str, fn: Callable[[], T], fallback: T) -> T:
        if stage in self.disabled:
            return fallback
        timing = self.clock.time(stage) if self.clock is not None and stage in TIMED_BY_BREAKER else nullcontext()
        try:
            with timing:
                result = fn()
        except Exception as exc:  # noqa: BLE001 - isolating stage failures is the point
            count = self.failures.get(stage, 0) + 1
            self.failures[stage] = count
            if count >= self.threshold:
                self.disabled[stage] = f"{type(exc).__name__}: {exc}"
                self.newly_disabled.append(stage)
            return fallback
        self.failures[stage] = 0
        return result

    def states(self) -> dict[str, str]:
        out = {stage: f"failing ({n})" for stage, n in self.failures.items() if n}
        out.update({stage: "open" for stage in self.disabled})
        return out

    def take_trips(self) -> list[str]:
        """One sentence per breaker tripped since the last call (each said once)."""
        trips, self.newly_disabled = self.newly_disabled, []
        return [trip_notice(stage, self.threshold, self.disabled.get(stage, "")) for stage in trips]


def trip_notice(stage: str, failures: int, error: str) -> str:
    """What the user reads when `stage` is switched off for the session."""
    return (
        f"context stage `{stage}` failed {failures} times in a row and is off for this session "
        f"(last error: {error or 'unknown'}); the conversation goes on without it"
    )
