"""Which model a session talks to: the one rule for `myrm`, `myrm run` and the TUI.

Why in settings: the rule reads only the settings (the model and where it came from) and the
session's recorded model; the automatic default lives in llm/ (above this layer), so callers pass
it in as `fallback` (llm.defaults.default_model) instead of this module importing it, and likewise
`built_in` (llm.session_model.built_in_model), which says whether a stored model needs no endpoint of
the user's to reach.

Why a session's stored model is not simply believed: it is a row of `.myrm/sessions.db`, and that
file can come with `git clone` like any other. A committed `.myrm/` is data, not configuration: a
model name stored there may only pick what the user could have picked without the repository's
help (see `choose_model`), so it can never send the conversation, and the user's key, to an
endpoint or a provider the user did not set up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

# The source of a model picked by `fallback`, shown by `myrm doctor` and in messages.
AUTOMATIC = "automatic (default_model)"
# The source of a resumed session's own model.
SESSION = "the session's model"
# Sources that mean "said for this launch" (settings/config_files/loader.py writes "flag --model" and
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

    @property
    def models(self) -> Mapping[str, Mapping[str, object]]: ...

    @property
    def api_base(self) -> str: ...


@dataclass(frozen=True)
class ModelChoice:
    model: str
    source: str  # where it came from: a settings source, SESSION or AUTOMATIC
    notice: str = ""  # one line for the user when the resumed session's stored model was set aside


def named_for_launch(source: str) -> bool:
    """True for a model from a flag, a `MYRM_MODEL` variable or a switch in the running app."""
    return source == _OVERRIDE or source.startswith(_LAUNCH_PREFIXES)


def choose_model(
    settings: ModelSettings,
    session_model: str | None = None,
    *,
    fallback: Callable[[], str | None] | None = None,
    built_in: Callable[[str], bool] | None = None,
) -> ModelChoice | None:
    """The model for a session being opened or continued, and where it came from; None when
    nothing names one and there is no `fallback` (the caller shows the onboarding message).

    Precedence, first that gives a name wins:
      1. a model named for this launch: `--model`, `MYRM_MODEL`, or a switch made in the running
         app (`/model`, the settings screen);
      2. the resumed session's own recorded model (`--continue`, `--session`, the sessions list):
         a session keeps the model it was started with (README: "the session keeps its own model
         unless `--model` names one"), as long as the user could have chosen it
         (`stored_model_allowed`); otherwise the next rules decide and `notice` says why;
      3. the configured model (user config, trusted workspace config);
      4. `fallback()`: llm.defaults.default_model, the first provider with an API key, else the
         embedded local model.
    """
    model = settings.model or ""
    source = settings.sources.get("model", "default")
    if model and named_for_launch(source):
        return ModelChoice(model, source)
    notice = ""
    if session_model:
        if stored_model_allowed(settings, session_model, built_in):
            return ModelChoice(session_model, SESSION)
        notice = set_aside_notice(session_model)
    if model:
        return ModelChoice(model, source, notice)
    automatic = fallback() if fallback is not None else None
    return ModelChoice(automatic, AUTOMATIC, notice) if automatic else None


def stored_model_allowed(settings: ModelSettings, model: str, built_in: Callable[[str], bool] | None) -> bool:
    """Whether a session's stored model may be resumed by itself: it is the configured model, a
    model declared under `[models]` of a config in force (the user's, or a trusted workspace's),
    any name while an `api_base` of a config in force says where every call goes, or one that
    needs nothing of the user's but a provider key (`built_in`: litellm's registry, reached at its
    provider's own endpoint; an installed embedded model; a test provider where they are on).
    Without `built_in` only the user's own configuration counts."""
    if model == settings.model or model in settings.models or settings.api_base:
        return True
    return built_in is not None and built_in(model)


def set_aside_notice(model: str) -> str:
    """The one line that says a stored model was not used, and how to use it anyway."""
    return (
        f"this session was stored with the model {model!r}, which neither your config nor myrm's model list "
        "declares (a session file can come with the repository), so it continues with your default; "
        "pass --model to choose it yourself."
    )
