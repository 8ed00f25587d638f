"""The budget equation: what part of the model window a prompt may use."""

from __future__ import annotations

from dataclasses import dataclass

# Tokenizer drift between tiktoken and the provider's own tokenizer is a few percent; 2% of the
# window (at least 256 tokens) keeps an estimated-fitting prompt from being rejected.
SAFETY_MARGIN_RATIO = 0.02
MIN_SAFETY_MARGIN = 256


@dataclass(frozen=True)
class Budget:
    window: int
    output_reserve: int
    safety_margin: int

    @property
    def prompt_limit(self) -> int:
        """Most prompt tokens a request may carry."""
        return max(0, self.window - self.output_reserve - self.safety_margin)


def budget_for(window: int, max_output_tokens: int) -> Budget:
    # Never reserve more than half the window for output: small local models (8k) with a large
    # configured max output would otherwise have no room for the conversation.
    reserve = min(max_output_tokens, window // 2)
    margin = max(MIN_SAFETY_MARGIN, int(window * SAFETY_MARGIN_RATIO))
    return Budget(window=window, output_reserve=reserve, safety_margin=margin)
