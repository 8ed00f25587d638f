"""Baselines: no management at all, and the naive cut every engine must beat.

raw: the whole history every turn (cache-perfect, budget-blind; its R_verbatim is the ceiling).
naive-truncation: drop the oldest messages until the prompt fits, with no regard for tool-call
pairs (what a hand-written loop does first; it shows what pair-awareness is worth).
"""

from __future__ import annotations

from typing import Any

from bench.contenders.base import StepContender


class Raw(StepContender):
    name = "raw"
    family = "baseline"
    note = "no management: every message, every turn"

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        self.history: list[dict[str, Any]] = [self.system]

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += new_messages
        return list(self.history)


class NaiveTruncation(StepContender):
    name = "naive-truncation"
    family = "baseline"
    note = "drop oldest messages until it fits; pair-unaware"

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        self.history: list[dict[str, Any]] = []

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += new_messages
        room = self.budget - self.counter.message(self.system)
        kept: list[dict[str, Any]] = []
        used = 0
        for message in reversed(self.history):
            cost = self.counter.message(message)
            if used + cost > room:
                break
            kept.append(message)
            used += cost
        kept.reverse()
        if len(kept) < len(self.history):
            self.history = kept  # dropped for good: the next turn starts from what was kept
        return [self.system, *kept]
