"""What the app needs to know about a model, whatever registry it came from."""

from __future__ import annotations

from dataclasses import dataclass

# Unknown models get this window: small enough to be safe on any current chat model.
CONSERVATIVE_WINDOW = 8192
CONSERVATIVE_MAX_OUTPUT = 2048


@dataclass(frozen=True)
class ModelInfo:
    name: str
    provider: str
    context_window: int
    max_output_tokens: int
    supports_tools: bool
    supports_vision: bool = False
    supports_prompt_caching: bool = False
    supports_reasoning: bool = False
    input_cost_per_token: float = 0.0
    output_cost_per_token: float = 0.0
    cache_read_cost_per_token: float = 0.0
    cache_write_cost_per_token: float = 0.0
    known: bool = True  # False: not in any registry, conservative defaults applied
    api_base: str | None = None
    warning: str | None = None
    # `[models."NAME"] reasoning_effort`: this model's effort, over the `reasoning_effort` setting.
    reasoning_effort: str | None = None
    # The user declared `[models."NAME"] max_output_tokens`: a server's real limit (vLLM and
    # llama.cpp refuse a request that asks for more), binding even when no registry knows the model.
    max_output_declared: bool = False

    def output_cap(self) -> int | None:
        """The most output tokens a call may ask of this model: the registry's figure for a model
        it knows, the user's declaration for any model; None for an unknown, undeclared model (its
        CONSERVATIVE_MAX_OUTPUT is a guess for budgeting, not a limit to impose on the answer)."""
        if (self.known or self.max_output_declared) and self.max_output_tokens > 0:
            return self.max_output_tokens
        return None
