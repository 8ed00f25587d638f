"""The last two layers: `MYRM_*` environment variables, then command-line flags.

Why a bad flag is an error and a bad variable a warning: the flag was typed for this very
command, so the command stops (exit 2) rather than run with a value the user did not ask for; a
variable is skipped like a bad value in a config file, and the layers before it stay in force.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from myrm_tui.settings.config_files.layers import Layers
from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY
from myrm_tui.settings.setting_spec import SettingSpec
from myrm_tui.settings.value_checks import type_error

ENV_PREFIX = "MYRM_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def apply_env(layers: Layers, env: Mapping[str, str]) -> None:
    for spec in SETTINGS:
        var = ENV_PREFIX + spec.key.upper()
        if var not in env:
            continue
        value, error = parse_text(spec, env[var])
        if error:
            layers.problem("env", None, f"{var}={env[var]!r}: {error} The value is ignored.")
        else:
            layers.set(spec, value, f"env {var}")


def apply_flags(layers: Layers, flags: Mapping[str, Any]) -> None:
    for key, value in flags.items():
        if value is None:
            continue
        spec = SPECS_BY_KEY.get(key)
        if spec is None:
            raise KeyError(f"unknown setting passed as a flag: {key}")  # a programming error
        flag = "--" + key.replace("_", "-")
        error = type_error(spec, value)
        if error:
            layers.problem("flags", None, f"{flag}: {error}", level="error")
        else:
            layers.set(spec, value, f"flag {flag}")


def parse_text(spec: SettingSpec, text: str) -> tuple[Any, str | None]:
    """Typed value of an environment string, or (None, one-sentence error)."""
    raw = text.strip()
    value: Any
    if spec.type is bool:
        if raw.lower() in _TRUE:
            value = True
        elif raw.lower() in _FALSE:
            value = False
        else:
            return None, "expected true or false (also 1/0, yes/no, on/off)."
    elif spec.type is int:
        try:
            value = int(raw.replace("_", ""))
        except ValueError:
            return None, f"expected a whole number such as {spec.default}."
    elif spec.type is float:
        try:
            value = float(raw)
        except ValueError:
            return None, f"expected a number such as {spec.default}."
    else:
        value = raw  # surrounding spaces in an env value are never meant (`export X=" yolo"`)
    return value, type_error(spec, value)
