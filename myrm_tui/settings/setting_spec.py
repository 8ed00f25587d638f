"""What one setting is: its declaration (`SettingSpec`) and how far a workspace file is believed.

Why apart from the table in schema.py: the loader, the workspace gate, the value checks and the
settings screen handle any setting through this one shape; the table is only its instances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# How far a value in a workspace file (`.myrm/config.toml`, written by whoever wrote the repository)
# is believed; user files, `MYRM_*` variables and flags are the user's own and always apply.
# Why a field on each spec rather than a list elsewhere: whoever adds a setting decides, right
# where it is declared, whether a cloned repository may set it; the default is the careful one.
FREE = "free"  # applies from any workspace file: looks, limits, prompt density
NEEDS_TRUST = "needs-trust"  # decides what runs or where data goes: only once the user trusts the file
TIGHTEN_ONLY = "tighten-only"  # what tools may touch: a workspace file may only make it stricter
# What bounds or hides things from commands (the sandbox's limits and hidden paths): a workspace
# file is ignored for these, trusted or not; only the user's own word sets them.
USER_ONLY = "user-only"
WORKSPACE_RULES = (FREE, NEEDS_TRUST, TIGHTEN_ONLY, USER_ONLY)


@dataclass(frozen=True)
class SettingSpec:
    key: str  # dotted-free snake_case; TOML key, `MYRM_<KEY>` env var, `--key` flag
    type: type  # str, int, float or bool
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    section: str = "general"  # groups the settings screen; "advanced" is collapsed
    # Whether changing it changes the agent (part of the execution fingerprint).
    shapes_agent: bool = True
    from_workspace: str = NEEDS_TRUST  # one of WORKSPACE_RULES (see above)
    # TIGHTEN_ONLY settings: every value, strictest first (for a bool, False is the strict one).
    strictness: tuple[Any, ...] = ()
    # Numbers: the range a value must be in (inclusive); `above` is an exclusive lower bound for
    # values that only make sense positive (a timeout of 0 s would fail every call at once).
    # Every int/float setting declares a lower bound (tests/faults/test_config_ranges.py checks).
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    # Text settings: a regular expression the whole value must match (empty: any text).
    pattern: str = ""
    pattern_words: str = ""  # what a matching value is, for the error sentence ("tool names separated by commas")
