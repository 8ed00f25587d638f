"""Whether a model window can hold a conversation at all, known before the first turn.

Why: the engine can shrink everything in a prompt except the fixed prefix (system prompt and
tool schemas) and the latest user message (its floor leaves pointers and one line per group of
summaries, `FLOOR_TOKENS` at most). A window that cannot hold the prefix, the answer reserve,
the floor and a short message fails every turn; saying so at start beats a first turn that
stores the user's message and then fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.window.budget import budget_for

# The engine's own messages when everything but the latest user message is reduced (the floor):
# one pointer per anchor (~35 tokens), one brief line per group of summaries (~45 tokens; groups
# are split only by messages kept in the prompt, so two or three), and the synthetic results an
# integrity repair may add. The fault suite measures the real maximum against this bound
# (tests/faults/test_progress.py).
FLOOR_TOKENS = 256
# Below this much room for the user's own words a window is useless even when it "fits": a few
# sentences of a request.
MIN_MESSAGE_TOKENS = 256


def fixed_prefix_tokens(system_prompt: str, tools: Sequence[dict[str, Any]], model: str) -> int:
    """System prompt + tool schemas, counted exactly as the engine counts them per assemble."""
    from myrm_tui.context.window.prefix_tokens import fixed_tokens, tools_key

    return fixed_tokens(system_prompt, tuple(tools) and tools_key(tools), model)


@dataclass(frozen=True)
class WindowFit:
    model: str
    window: int
    max_output_tokens: int
    fixed_tokens: int

    @property
    def output_reserve(self) -> int:
        return budget_for(self.window, self.max_output_tokens).output_reserve

    @property
    def room(self) -> int:
        """Tokens left for the user's message once the prefix, reserve, margin and floor are taken."""
        return budget_for(self.window, self.max_output_tokens).prompt_limit - self.fixed_tokens - FLOOR_TOKENS

    @property
    def ok(self) -> bool:
        return self.room >= MIN_MESSAGE_TOKENS

    def problem(self) -> str | None:
        """One sentence for the user when the window is too small, else None."""
        if self.ok:
            return None
        return (
            f"The context window of {self.model} ({self.window:,} tokens) is too small for myrm: the system "
            f"prompt and tool schemas take {self.fixed_tokens:,} tokens and {self.output_reserve:,} are kept "
            f"for the answer, which leaves {max(self.room, 0):,} for the conversation (at least "
            f"{MIN_MESSAGE_TOKENS:,} needed); use a model with a larger window, set its real context_window "
            f'under [models."{self.model}"] if it has more, or lower max_output_tokens.'
        )


def window_fit(
    *, model: str, window: int, max_output_tokens: int, system_prompt: str, tools: Sequence[dict[str, Any]]
) -> WindowFit:
    return WindowFit(model, window, max_output_tokens, fixed_prefix_tokens(system_prompt, tools, model))
