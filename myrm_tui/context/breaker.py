"""Per-session circuit breakers for engine stages.

Why per session (not process-global): one pathological session must not disable a
stage for every other session in the same process. A stage that raises `threshold` times in a
row is skipped for the rest of the session; the turn goes on without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass
class StageBreakers:
    threshold: int = 3
    failures: dict[str, int] = field(default_factory=dict)
    disabled: dict[str, str] = field(default_factory=dict)  # stage → last error
    newly_disabled: list[str] = field(default_factory=list)

    def run(self, stage: str, fn: Callable[[], T], fallback: T) -> T:
        if stage in self.disabled:
            return fallback
        try:
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
