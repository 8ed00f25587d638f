"""jetbrains-mask-policy: observation masking from "The Complexity Trap" (docs/benchmarks.md, "Contenders").

Tool outputs older than the last 10 turns are replaced by a placeholder; nothing else changes,
and there is no summary and no budget (the paper's setup). The boundary moves every turn, which
is exactly what costs it prompt-cache prefix (B3).
"""

from __future__ import annotations

from typing import Any

from bench.contenders.base import StepContender
from bench.contenders.policy_common import cleared

KEEP_TURNS = 10
MASK = "[Old environment observation omitted]"


class JetbrainsMaskPolicy(StepContender):
    name = "jetbrains-mask-policy"
    family = "policy"
    note = "mask tool outputs older than the last 10 turns; no budget"

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        self.turns: list[list[dict[str, Any]]] = []

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.turns.append(new_messages)
        if len(self.turns) > KEEP_TURNS:
            index = len(self.turns) - KEEP_TURNS - 1
            self.turns[index] = [cleared(m, MASK) if m.get("role") == "tool" else m for m in self.turns[index]]
            self.compacted = True
        return [self.system, *(m for turn in self.turns for m in turn)]
