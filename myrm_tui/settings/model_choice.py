"""Which model a session talks to: the one rule for `myrm`, `myrm run` and the TUI.

Why in settings: the rule reads only the settings (the model and where it came from) and the
session's recorded model; the automatic default lives in llm/ (above this layer), so callers pass
it in as `fallback` (llm.defaults.default_model) instead of this module importing it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

# The source of a model picked by `fallback`, shown by `myrm doctor` and in messages.
AUTOMATIC = "automatic (default_model)"
# The source of a resumed session's own model.
SESSION = "the session's model"
# Sources that mean "said for this launch" (settings/loader.py writes "flag --model" and
# "env MYRM_MODEL"; Settings.with_values writes "override", a switch made in the running app).
# They beat a resumed session's model; a config file's model is only a default for new sessions.
_LAUNCH_PREFIXES = ("flag ", "env ")
_OVERRIDE = "override"


class ModelSettings(Protocol):
    """What the rule reads of settings.settings.Settings (a Protocol, so settings.py can offer the
    rule under its old name without an import cycle)."""

    @property
    def model(self) -> str: ...

    @property
    def sources(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class ModelChoice:
    model: str
    source: str  # where it came from: a settings source, SESSION or AUTOMATIC


def named_for_launch(source: str) -> bool:
    """True for a model from a flag, a `MYRM_MODEL` variable or a switch in the running app."""
    return source == _OVERRIDE or source.startswith(_LAUNCH_PREFIXES)


def choose_model(
    settings: ModelSettings, session_model: str | None = None, *, fallback: Callable[[], str | None] | None = None
) -> ModelChoice | None:
    """The model for a session being opened or continued, and where it came from; None when
    nothing names one and there is no `fallback` (the caller shows the onboarding message).

    Precedence, first that gives a name wins:
      1. a model named for this launch: `--model`, `MYRM_MODEL`, or a switch made in the running
         app (`/model`, the settings screen);
      2. the resumed session's own recorded model (`--continue`, `--session`, the sessions list):
         a session keeps the model it was started with (README: "the session keeps its own model
         unless `--model` names one");
      3. the configured model (user config, trusted workspace config);
      4. `fallback()`: llm.defaults.default_model, the first provider with an API key, else the
         embedded local model.
    """
    model = settings.model or ""
    source = settings.sources.get("model", "default")
    if model and named_for_launch(source):
        return ModelChoice(model, source)
    if session_model:
        return ModelChoice(session_model, SESSION)
    if model:
        return ModelChoice(model, source)
    automatic = fallback() if fallback is not None else None
    return ModelChoice(automatic, AUTOMATIC) if automatic else None
