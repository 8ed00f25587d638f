"""What the caller hands the engine per request, and the figures every part derives from it.

Why its own module: the engine, the compactor and the summary preparation all need the prompt's
fixed prefix, its budget and its render key; computing them here keeps one expression for each
(three copies of the fixed-token count had drifted into the engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.observations.masker_tiers import ALWAYS_PROTECTED
from myrm_tui.context.rows.family import family_of
from myrm_tui.context.window.budget import Budget, budget_for
from myrm_tui.context.window.prefix_tokens import fixed_tokens, tools_key
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.settings.sections.output_filters import FilterSpec

# (provider family, vision, model name): what a rendered message depends on besides its row.
RenderKey = tuple[str, bool, str]


@dataclass(frozen=True)
class TurnInput:
    """What the caller knows per request: the fixed prefix and the model."""

    system_prompt: str
    tools: Sequence[dict[str, Any]]
    model: ModelInfo
    max_output_tokens: int
    now: float | None = None  # seconds; None = wall clock (replay passes a virtual clock)
    force_tier: str | None = None  # "light"/"full"/"emergency": compact now (manual, or a provider overflow)
    trigger: str = "auto"
    # The `eviction_order` setting ("auto", "recency", "relevance"; context/observations/relevance_policy.py).
    # Per request, not in EngineConfig: the engine outlives the agent a settings change rebuilds.
    eviction_order: str = "auto"
    restate_objective: bool | None = None  # the `restate_objective` setting; None: the engine config's
    # The `prefix_anchor_turns`, `removal_focus_band` and `file_read_exempt` settings; None: the
    # engine config's (`EngineConfig`, where each is explained; the replay sets them there).
    prefix_anchor_turns: int | None = None
    removal_focus_band: int | None = None
    file_read_exempt: bool | None = None
    # The age windows (`thinking_keep_turns`, `eviction_min_age`, `observation_keep_window`
    # settings); None: the engine config's.
    thinking_keep_turns: int | None = None
    eviction_min_age: int | None = None
    observation_keep_window: int | None = None
    # The `compact_while_answering` setting; None: the engine config's.
    compact_while_answering: bool | None = None
    protected_tools: frozenset[str] = (
        ALWAYS_PROTECTED  # the `protected_tools` setting (context/observations/masker_tiers.py)
    )
    # The session's declarative output filters (`Settings.output_filters`), ahead of the shipped
    # ones wherever the engine excerpts an output (arrival, light tier); empty: the shipped only.
    output_filters: tuple[FilterSpec, ...] = ()

    def fixed_tokens(self) -> int:
        """System prompt + tool schemas (memoised per distinct prefix in `prefix_tokens`)."""
        return fixed_tokens(self.system_prompt, tuple(self.tools) and tools_key(self.tools), self.model.name)

    def budget(self) -> Budget:
        return budget_for(self.model.context_window, self.max_output_tokens)

    def render_key(self) -> RenderKey:
        return (family_of(self.model.name), self.model.supports_vision, self.model.name)
