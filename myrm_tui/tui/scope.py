"""How far a model or theme change reaches: this session, or the default of every later launch.

A switch is for this session unless the user says otherwise, because a switch that silently
rewrote the user config outlived its reason (a mistyped scripted path became the model of every
later launch). Saying otherwise is explicit: the picker's make-default key, or `--default` after
`/model` and `/theme`. Pure: the slash commands and tests parse with it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The word that turns `/model NAME` or `/theme NAME` into "make it the default"; a flag rather
# than a bare word because a model or theme could be named "default".
DEFAULT_FLAG = "--default"


@dataclass(frozen=True)
class ScopedChoice:
    """A model or theme name ("" when none was given: keep the current one) and whether it
    should also be written to the user config."""

    name: str
    make_default: bool = False


def parse_scoped(argument: str) -> ScopedChoice:
    """`NAME`, `NAME --default`, `--default NAME` or `--default` alone."""
    words = argument.split()
    make_default = DEFAULT_FLAG in words
    name = " ".join(word for word in words if word != DEFAULT_FLAG)
    return ScopedChoice(name, make_default)


def model_note(model: str, session_only: bool) -> tuple[str, str]:
    """The transcript note after a switch (text, hint): it says how far the switch reaches, so a
    session-only choice is never mistaken for a new default."""
    if session_only:
        return (
            f"model set to {model} for this session; it answers from your next message.",
            f"New sessions keep the default model; `/model {model} {DEFAULT_FLAG}` makes it the default.",
        )
    return f"model set to {model} and saved as the default; it answers from your next message.", ""


def theme_note(theme: str, make_default: bool) -> str:
    """The toast after a theme change, with how to keep it (or that it was kept)."""
    if make_default:
        return f"Theme {theme} saved as the default."
    return f"Theme {theme} for this session; `/theme {DEFAULT_FLAG}` makes it the default."
