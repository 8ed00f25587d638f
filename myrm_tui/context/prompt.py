"""What the engine hands the agent: the prompt to send, and the error when none can fit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from myrm_tui.context.assemble_report import AssembleReport
from myrm_tui.context.window.budget import Budget


class ContextExhausted(Exception):
    """The prompt cannot fit the model window; carries the numbers for the user."""

    def __init__(self, tokens: int, budget: Budget, model: str, *, fixed_tokens: int = 0, message_tokens: int = 0):
        self.tokens = tokens
        self.budget = budget
        self.model = model
        self.fixed_tokens = fixed_tokens  # system prompt + tool schemas
        self.message_tokens = message_tokens  # the latest user message as the prompt shows it
        super().__init__(self.user_text())

    def user_text(self) -> str:
        # Everything else shrinks to a pointer (the engine's floor), so when the prompt still
        # does not fit, the fixed prefix and the latest message are the whole story: say so.
        parts = []
        if self.fixed_tokens:
            parts.append(f"the system prompt and tool schemas take {self.fixed_tokens:,}")
        if self.message_tokens:
            parts.append(f"your latest message {self.message_tokens:,}")
        detail = f" ({', '.join(parts)})" if parts else ""
        return (
            f"The conversation needs {self.tokens:,} prompt tokens{detail} but {self.model} allows "
            f"{self.budget.prompt_limit:,} (window {self.budget.window:,} minus "
            f"{self.budget.output_reserve:,} reserved for the answer), even after compaction. "
            "Shorten the last message, lower max_output_tokens, or switch to a model with a larger window."
        )


class NothingWorthCompacting(Exception):
    """The compact command on a span too short to gain from a summary (`check_worth_compacting`):
    its message is what the user is told; nothing was changed."""

    def __init__(self, span: int, least: int) -> None:
        super().__init__(
            f"Nothing worth compacting yet: the messages before the latest exchange hold {span:,} tokens, "
            f"and a summary of them would save little or grow the prompt (compacting starts at {least:,})."
        )
        self.span = span
        self.least = least


@dataclass(frozen=True)
class AssembledPrompt:
    messages: list[dict[str, Any]]  # exactly what is sent: system first, provider-valid
    tools: list[dict[str, Any]]
    tokens: int
    budget: Budget
    cache_breakpoints: tuple[int, ...]
    report: AssembleReport  # also reads as the stored JSON (`dict(report)`)
