"""What the engine hands the agent: the prompt to send, and the error when none can fit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.budget import Budget


class ContextExhausted(Exception):
    """The prompt cannot fit the model window; carries the numbers for the user."""

    def __init__(self, tokens: int, budget: Budget, model: str):
        self.tokens = tokens
        self.budget = budget
        self.model = model
        super().__init__(self.user_text())

    def user_text(self) -> str:
        return (
            f"The conversation needs {self.tokens:,} prompt tokens but {self.model} allows "
            f"{self.budget.prompt_limit:,} (window {self.budget.window:,} minus "
            f"{self.budget.output_reserve:,} reserved for the answer), even after compaction. "
            "Fork a fresh session, shorten the last message, or switch to a model with a larger window."
        )


@dataclass(frozen=True)
class AssembledPrompt:
    messages: list[dict[str, Any]]  # exactly what is sent: system first, provider-valid
    tools: list[dict[str, Any]]
    tokens: int
    budget: Budget
    cache_breakpoints: tuple[int, ...] = ()
    report: dict[str, Any] = field(default_factory=dict)
