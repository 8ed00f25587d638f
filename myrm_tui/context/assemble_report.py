"""The per-assemble report: what the prompt costs, what the ladder decided, how long each stage took.

Why typed: the agent stores it as the data of the `assemble` event, and the TUI (ring, panel,
health screen) and the bench read it back; `to_dict` is the one writer of that JSON (replays
digest it, so its shape must not change) and `from_dict` the one lenient reader (older sessions
hold smaller reports, and the early pass-through report has `prompt_limit` and `window` at the
top level).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.report import StageFigures
from myrm_tui.context.rows.json_fields import JsonView, float_or_none, int_or_none, mapping_or_empty, str_or_none
from myrm_tui.context.stages.cache_optimize import CacheBreak
from myrm_tui.context.window.budget import Budget


@dataclass(frozen=True)
class BudgetFigures:
    window: int | None = None
    output_reserve: int | None = None
    safety_margin: int | None = None
    prompt_limit: int | None = None
    fixed_tokens: int | None = None  # system prompt + tool schemas
    history_tokens: int | None = None
    utilization: float | None = None  # prompt tokens ÷ prompt limit
    usage_ratio: float | None = None  # provider-reported ÷ estimated prompt tokens, last call

    @classmethod
    def of(cls, budget: Budget, *, fixed: int, history: int, tokens: int, usage_ratio: float) -> BudgetFigures:
        return cls(
            budget.window,
            budget.output_reserve,
            budget.safety_margin,
            budget.prompt_limit,
            fixed,
            history,
            round(tokens / budget.prompt_limit, 4) if budget.prompt_limit else 1.0,
            round(usage_ratio, 3),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "output_reserve": self.output_reserve,
            "safety_margin": self.safety_margin,
            "prompt_limit": self.prompt_limit,
            "fixed_tokens": self.fixed_tokens,
            "history_tokens": self.history_tokens,
            "utilization": self.utilization,
            "usage_ratio": self.usage_ratio,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BudgetFigures:
        return cls(
            int_or_none(data.get("window")),
            int_or_none(data.get("output_reserve")),
            int_or_none(data.get("safety_margin")),
            int_or_none(data.get("prompt_limit")),
            int_or_none(data.get("fixed_tokens")),
            int_or_none(data.get("history_tokens")),
            float_or_none(data.get("utilization")),
            float_or_none(data.get("usage_ratio")),
        )


@dataclass(frozen=True)
class LadderFigures:
    tier: str | None = None
    action: str | None = None  # why the ladder ran (or did not run) a tier
    deferred: str | None = None  # the tier waiting for a cold cache

    def to_dict(self) -> dict[str, Any]:
        return {"tier": self.tier, "action": self.action, "deferred": self.deferred}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LadderFigures:
        return cls(str_or_none(data.get("tier")), str_or_none(data.get("action")), str_or_none(data.get("deferred")))


@dataclass(frozen=True)
class IntegrityFigures:
    orphans_dropped: int = 0
    dangling_repaired: tuple[str, ...] = ()  # call ids answered with a synthetic result

    def to_dict(self) -> dict[str, Any]:
        return {"orphans_dropped": self.orphans_dropped, "dangling_repaired": list(self.dangling_repaired)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IntegrityFigures:
        repaired = data.get("dangling_repaired")
        return cls(
            int_or_none(data.get("orphans_dropped")) or 0,
            tuple(str(c) for c in repaired) if isinstance(repaired, list) else (),
        )


@dataclass(frozen=True)
class AssembleReport(JsonView):
    tokens: int | None
    messages: int | None
    budget: BudgetFigures
    ladder: LadderFigures
    stages: tuple[StageFigures, ...]
    breakers: dict[str, str] | None  # stage → "failing (n)" / "open"; None: not reported
    event: CompactionEvent | None
    cache_break: CacheBreak | None
    integrity: IntegrityFigures | None
    ms: float | None
    # Every pipeline stage's own time (`pipeline.STAGES` order). A key of its own, named like the
    # other wall-clock keys the replay digest leaves out, so adding it changed no stored figure.
    stage_ms: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "messages": self.messages,
            "budget": self.budget.to_dict(),
            "ladder": self.ladder.to_dict(),
            "stages": [s.to_dict() for s in self.stages],
            "breakers": None if self.breakers is None else dict(self.breakers),
            "event": self.event.to_dict() if self.event is not None else None,
            "cache_break": self.cache_break.to_dict() if self.cache_break is not None else None,
            "integrity": self.integrity.to_dict() if self.integrity is not None else None,
            "ms": self.ms,
            "stage_ms": None if self.stage_ms is None else dict(self.stage_ms),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AssembleReport:
        budget = BudgetFigures.from_dict(mapping_or_empty(data.get("budget")))
        # The early pass-through report (before the engine ran) has its limits at the top level.
        window = budget.window if budget.window is not None else int_or_none(data.get("window"))
        limit = budget.prompt_limit if budget.prompt_limit is not None else int_or_none(data.get("prompt_limit"))
        if limit is None:
            limit = window
        event, found_break = data.get("event"), data.get("cache_break")
        breakers, integrity = data.get("breakers"), data.get("integrity")
        return cls(
            tokens=int_or_none(data.get("tokens")),
            messages=int_or_none(data.get("messages")),
            budget=replace(budget, window=window, prompt_limit=limit),
            ladder=LadderFigures.from_dict(mapping_or_empty(data.get("ladder"))),
            stages=tuple(StageFigures.from_dict(s) for s in data.get("stages") or () if isinstance(s, Mapping)),
            breakers={str(k): str(v) for k, v in breakers.items()} if isinstance(breakers, Mapping) else None,
            event=CompactionEvent.from_dict(event) if isinstance(event, Mapping) else None,
            cache_break=CacheBreak.from_dict(found_break) if isinstance(found_break, Mapping) else None,
            integrity=IntegrityFigures.from_dict(integrity) if isinstance(integrity, Mapping) else None,
            ms=float_or_none(data.get("ms")),
            stage_ms=_stage_ms(data.get("stage_ms")),
        )


def _stage_ms(value: Any) -> dict[str, float] | None:
    """Lenient: a report stored before `stage_ms` existed has none; odd values are left out."""
    if not isinstance(value, Mapping):
        return None
    return {str(k): v for k, raw in value.items() if (v := float_or_none(raw)) is not None}
