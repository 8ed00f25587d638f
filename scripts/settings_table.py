"""Print the Markdown table of settings for the README, generated from the schema.

Why a script: the README's table must not drift from `SETTINGS`; rerun this and paste.
Usage: python scripts/settings_table.py
"""

from __future__ import annotations

import json

from myrm_tui.settings.schema import SETTINGS
from myrm_tui.settings.setting_spec import FREE, NEEDS_TRUST, TIGHTEN_ONLY

# How a workspace file may set each setting (settings/trust.py), in the README's words.
WORKSPACE_WORDS = {FREE: "applies", NEEDS_TRUST: "after trust", TIGHTEN_ONLY: "stricter only"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _range(spec) -> str:
    """The declared range of a number, as the loader enforces it."""

    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    parts = []
    if spec.above is not None:
        parts.append(f"> {num(spec.above)}")
    if spec.minimum is not None:
        parts.append(f"≥ {num(spec.minimum)}")
    if spec.maximum is not None:
        parts.append(f"≤ {num(spec.maximum)}")
    return f" Range: {', '.join(parts)}." if parts else ""


def table() -> str:
    rows = ["| setting | env var | type | default | in a workspace file | what it does |", "|---|---|---|---|---|---|"]
    for spec in SETTINGS:
        # Defaults written the way a TOML config file spells them.
        if spec.type is str:
            default = json.dumps(spec.default)
        elif spec.type is bool:
            default = str(spec.default).lower()
        else:
            default = str(spec.default)
        doc = spec.help + (f" Choices: {', '.join(spec.choices)}." if spec.choices else "") + _range(spec)
        workspace = WORKSPACE_WORDS.get(spec.from_workspace, WORKSPACE_WORDS[NEEDS_TRUST])
        rows.append(
            f"| `{spec.key}` | `MYRM_{spec.key.upper()}` | {spec.type.__name__} | `{default}` | "
            f"{workspace} | {_cell(doc)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
