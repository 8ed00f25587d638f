"""The start-up window check for a configured model (TUI notice, `myrm run` exit 2).

Built from the same AgentBuild the first turn uses, so the fixed prefix measured here is the
one the engine will count (context/window/room.py says why the check exists).
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.setup.build import build_agent
from myrm_tui.context.window.room import WindowFit, window_fit
from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.settings.settings import Settings


def max_output_for(settings: Settings, model: ModelInfo) -> int:
    """The output tokens a call asks for: the setting, capped by the model's known or declared
    limit (the rule of agent.model_calls.call_settings_for)."""
    max_out = int(settings.max_output_tokens)
    cap = model.output_cap()
    return min(max_out, cap) if cap is not None else max_out


def fit_for(settings: Settings, workspace: Path) -> WindowFit:
    build = build_agent(settings, Path(workspace))
    model = build.model
    return window_fit(
        model=settings.model,
        window=model.context_window,
        max_output_tokens=max_output_for(settings, model),
        system_prompt=build.system_prompt.text,
        tools=build.tools.schemas(),
    )


def window_problem(settings: Settings, workspace: Path) -> str | None:
    """One sentence when the model's window cannot hold myrm's fixed prefix and a message, else
    None (also None when the model cannot be resolved: the first turn reports that)."""
    try:
        fit = fit_for(settings, workspace)
    except Exception:  # noqa: BLE001 - an unresolvable model is reported by the turn itself
        return None
    return fit.problem()
