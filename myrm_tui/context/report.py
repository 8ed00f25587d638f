"""Per-stage figures of one assemble: the single source the ring, the panel and the bench read.

`StageTimer` writes the report's `stages` entries (tokens, items; several stages may share one,
see `pipeline.Stage.figures`); `StageClock` the time of every single stage (`stage_ms`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.rows.json_fields import float_or_none, int_or_none


@dataclass
class StageFigures:
    name: str  # one of `pipeline.STAGES`
    tokens_in: int = 0
    tokens_out: int = 0
    items: int = 0
    ms: float | None = None  # set by the timer; None only in a stored report that lacks it

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.name,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "items": self.items,
            "ms": self.ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StageFigures:
        return cls(
            str(data.get("stage", "?")),
            int_or_none(data.get("tokens_in")) or 0,
            int_or_none(data.get("tokens_out")) or 0,
            int_or_none(data.get("items")) or 0,
            float_or_none(data.get("ms")),
        )


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


@dataclass
class StageClock:
    """Wall time per pipeline stage, exclusive: a stage timed inside another (the summarize
    breaker inside a compaction event) is subtracted from the outer one, so the times add up to
    the assemble's and each says what that stage cost."""

    ms: dict[str, float] = field(default_factory=dict)
    _open: list[list[Any]] = field(default_factory=list)  # [name, started, nested ms]

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        frame: list[Any] = [name, time.perf_counter(), 0.0]
        self._open.append(frame)
        try:
            yield
        finally:
            self._open.pop()
            elapsed = (time.perf_counter() - frame[1]) * 1000
            self.ms[name] = self.ms.get(name, 0.0) + elapsed - frame[2]
            if self._open:
                self._open[-1][2] += elapsed

    def add(self, name: str, ms: float) -> None:
        """Time measured by the caller (summed per row), inside whatever stage is open now."""
        self.ms[name] = self.ms.get(name, 0.0) + ms
        if self._open:
            self._open[-1][2] += ms

    def figures(self, order: Sequence[str]) -> dict[str, float]:
        """The times in `order` (the pipeline's), rounded like every ms in the report."""
        return {name: round(self.ms[name], 3) for name in order if name in self.ms}
