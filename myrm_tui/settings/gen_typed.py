"""Writes settings/typed_values.py from the schema: `python -m myrm_tui.settings.gen_typed`.

Why generated rather than hand-written: the schema (settings/schema.py) is the one place a setting
is declared; a hand-kept list of typed attributes would drift from it. Why not derive the types at
run time: mypy reads source, so the types must be spelled out in a file it can see.
tests/settings/test_typed_values.py fails when the file on disk differs from `render()`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from myrm_tui.settings.schema import SETTINGS
from myrm_tui.settings.setting_spec import SettingSpec

TARGET = Path(__file__).with_name("typed_values.py")
GENERATOR = "python -m myrm_tui.settings.gen_typed"

_HEADER = f'''"""Typed read access to every setting. GENERATED from settings/schema.py: do not edit.

Change the schema, then run `{GENERATOR}`; tests/settings/test_typed_values.py
fails while this file is out of date. Why it exists: `Settings` used a `__getattr__`, so every
`settings.<key>` was `Any` to mypy; these properties give each one the schema's type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from myrm_tui.settings.schema import SPECS_BY_KEY
'''

_CHANGES = '''

class SettingChanges(TypedDict, total=False):
    """The keyword arguments of `Settings.with_values`: any schema key, with its type."""

'''

_CLASS = '''

class SettingValues:
    """Base of `Settings`: one read-only property per schema key (a value not set is the default)."""

    __slots__ = ()
    values: Mapping[str, Any]

    def _value(self, key: str) -> Any:
        # Any: `values` holds whatever the layers loaded; the schema checked each value's type when it
        # was set, which is why the properties below may `cast` it to that type.
        return self.values.get(key, SPECS_BY_KEY[key].default)
'''


def alias_name(key: str) -> str:
    """`prompt_mode` → `PromptMode`: the name of a setting's Literal type."""
    return "".join(part.capitalize() for part in key.split("_"))


def annotation(spec: SettingSpec) -> str:
    """The Python type of a setting's value, as source text."""
    base = alias_name(spec.key) if spec.choices else spec.type.__name__
    return f"{base} | None" if spec.default is None else base


def render() -> str:
    """The whole text of typed_values.py for the current schema (ruff-format clean)."""
    parts = [_HEADER]
    with_choices = [spec for spec in SETTINGS if spec.choices]
    if with_choices:
        parts.append("\n# The values a setting with `choices` can take.\n")
        for spec in with_choices:
            choices = ", ".join(f'"{choice}"' for choice in spec.choices)
            parts.append(f"{alias_name(spec.key)} = Literal[{choices}]\n")
    parts.append(_CHANGES)
    for spec in SETTINGS:
        parts.append(f"    {spec.key}: {annotation(spec)}\n")
    parts.append(_CLASS)
    for spec in SETTINGS:
        parts.append(
            f"\n    @property\n    def {spec.key}(self) -> {annotation(spec)}:\n"
            f'        return cast({annotation(spec)}, self._value("{spec.key}"))\n'
        )
    return "".join(parts)


def main() -> int:
    text = render()
    if TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text:
        print(f"{TARGET} is up to date")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
