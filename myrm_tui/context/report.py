"""Per-stage figures of one assemble: the single source the ring, the panel and the bench read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageFigures:
    name: str
    tokens_in: int = 0
    tokens_out: int = 0
    items: int = 0
    ms: float = 0.0


@dataclass
class StageTimer:
    stages: list[StageFigures] = field(default_factory=list)

    @contextmanager
    def stage(self, name: str) -> Iterator[StageFigures]:
        figures = StageFigures(name)
        started = time.perf_counter()
        try:
            yield figures
        finally:
            figures.ms = round((time.perf_counter() - started) * 1000, 3)
            self.stages.append(figures)

    def as_list(self) -> list[dict[str, Any]]:
        return [
            {"stage": s.name, "tokens_in": s.tokens_in, "tokens_out": s.tokens_out, "items": s.items, "ms": s.ms}
            for s in self.stages
        ]
