"""Checks one value against the schema: type, choices, range; one sentence saying what is wrong.

Why one module for the reader and the writer: a value the loader would skip must also be refused
when the settings screen saves it (settings/config_files/write.py), with the same words.
"""

from __future__ import annotations

import re
from typing import Any

from myrm_tui.settings.schema import SPECS_BY_KEY
from myrm_tui.settings.setting_spec import SettingSpec

# `[models."NAME"]` numeric fields: the least each may be (a window or an output of 0 tokens
# leaves no room for anything; a negative price would report a gain). Whether the window also
# holds myrm's fixed prefix is checked when a model is used (context/window/room.py), where the prefix
# is known.
MODEL_FIELD_MINIMUMS: dict[str, int] = {
    "context_window": 1,
    "max_output_tokens": 1,
    "input_cost_per_token": 0,
    "output_cost_per_token": 0,
    "cache_read_cost_per_token": 0,
    "cache_write_cost_per_token": 0,
}

# Names that look like secrets. Matching is on the key name only; the value is never echoed.
SECRET_KEY = re.compile(r"(api_?key|secret|password|passwd|(^|_)(access|auth|bearer)_?token)$", re.IGNORECASE)
TYPE_WORDS = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}


def is_type(value: Any, expected: type) -> bool:
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, expected)


def type_error(spec: SettingSpec, value: Any) -> str | None:
    """One sentence saying what is wrong with `value` for `spec`, or None if it is valid."""
    if not is_type(value, spec.type):
        return f"`{spec.key}` must be {TYPE_WORDS[spec.type]}, not {value!r}."
    if spec.choices and value not in spec.choices:
        return f"`{spec.key}` must be one of {', '.join(spec.choices)}, not {value!r}."
    if spec.type in (int, float):
        return range_error(f"`{spec.key}`", value, minimum=spec.minimum, above=spec.above, maximum=spec.maximum)
    if spec.pattern and not re.fullmatch(spec.pattern, value):
        return f"`{spec.key}` must be {spec.pattern_words or 'text of another form'}, not {value!r}."
    return None


def range_error(
    what: str, value: float, *, minimum: float | None = None, above: float | None = None, maximum: float | None = None
) -> str | None:
    """One sentence when `value` is out of the declared range (no bound declared: not negative)."""
    if above is not None and not value > above:
        return f"{what} must be more than {_number(above)}, not {value!r}."
    low = 0 if minimum is None and above is None else minimum
    if low is not None and value < low:
        if value < 0 <= low:
            return f"{what} cannot be negative ({value!r}); use at least {_number(low)}."
        return f"{what} must be at least {_number(low)}, not {value!r}."
    if maximum is not None and value > maximum:
        return f"{what} must be at most {_number(maximum)}, not {value!r}."
    return None


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def model_field_error(model: str, key: str, value: Any) -> str | None:
    if key == "reasoning_effort":
        choices = SPECS_BY_KEY["reasoning_effort"].choices
        return (
            None
            if value in choices
            else f"`reasoning_effort` of `{model}` must be one of {', '.join(choices)}, not {value!r}."
        )
    minimum = MODEL_FIELD_MINIMUMS.get(key)
    if minimum is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return range_error(f"`{key}` of `{model}`", value, minimum=minimum)


def did_you_mean(key: str) -> str:
    import difflib  # only when a key is unknown: not on every start

    close = difflib.get_close_matches(key, list(SPECS_BY_KEY), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""
