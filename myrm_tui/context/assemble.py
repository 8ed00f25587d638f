"""The seam where the agent gets its prompt: stored rows in, provider-ready messages out.

This version is the foundation's pass-through: system prompt + the stored history, made
provider-valid, and refused with a typed error when it does not fit. The context engine replaces
the middle (filters, tiers, summaries) without changing this contract.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from myrm_tui.context.budget import Budget, budget_for
from myrm_tui.context.integrity import repair_pairs
from myrm_tui.context.tokens import count_message_tokens, count_text_tokens, count_tools_tokens
from myrm_tui.llm.model_info import ModelInfo
from myrm_tui.store.records import MessageRecord


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
            f"{self.budget.output_reserve:,} reserved for the answer). "
            "Start a new session or fork this one, or switch to a model with a larger window."
        )


@dataclass(frozen=True)
class AssemblyInput:
    session_id: str
    system_prompt: str
    history: Sequence[MessageRecord]
    tools: Sequence[dict[str, Any]]
    model: ModelInfo
    max_output_tokens: int


@dataclass(frozen=True)
class AssembledPrompt:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    tokens: int
    budget: Budget
    cache_breakpoints: tuple[int, ...] = ()
    report: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=16)
def _system_tokens(system_prompt: str, model: str) -> int:
    return count_message_tokens({"role": "system", "content": system_prompt}, model)


@lru_cache(maxsize=16)
def _tools_tokens(tools_json: str, model: str) -> int:
    return count_tools_tokens(json.loads(tools_json), model)


def assemble(inp: AssemblyInput) -> AssembledPrompt:
    started = time.perf_counter()
    model = inp.model.name
    history = [record.message for record in inp.history]
    repaired, integrity = repair_pairs(history)
    messages = [{"role": "system", "content": inp.system_prompt}, *repaired]

    tools = list(inp.tools)
    tokens = _system_tokens(inp.system_prompt, model)
    tokens += _tools_tokens(json.dumps(tools, sort_keys=True), model) if tools else 0
    stored_tokens = {id(record.message): record.tokens for record in inp.history}
    for message in repaired:
        # Stored rows carry their count; only synthetic repairs are counted here.
        tokens += stored_tokens.get(id(message)) or count_message_tokens(message, model)

    budget = budget_for(inp.model.context_window, inp.max_output_tokens)
    if tokens > budget.prompt_limit:
        raise ContextExhausted(tokens, budget, model)

    report = {
        "stage": "passthrough",
        "tokens": tokens,
        "prompt_limit": budget.prompt_limit,
        "window": budget.window,
        "messages": len(messages),
        "orphans_dropped": integrity.orphans_dropped,
        "dangling_repaired": integrity.dangling_repaired,
        "ms": round((time.perf_counter() - started) * 1000, 3),
    }
    # The system prompt + tools are the stable prefix; the latest message is the moving end.
    breakpoints = (0, len(messages) - 1) if len(messages) > 1 else (0,)
    return AssembledPrompt(messages, tools, tokens, budget, breakpoints, report)


__all__ = ["AssembledPrompt", "AssemblyInput", "ContextExhausted", "assemble", "count_text_tokens"]
