"""Print the Markdown table of settings for the README, generated from the schema.

Why a script: the README's table must not drift from `SETTINGS`; rerun this and paste.
Usage: python scripts/settings_table.py
"""

from __future__ import annotations

import json

from myrm_tui.settings.schema import SETTINGS


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table() -> str:
    rows = ["| setting | env var | type | default | what it does |", "|---|---|---|---|---|"]
    for spec in SETTINGS:
        # Defaults written the way a TOML config file spells them.
        if spec.type is str:
            default = json.dumps(spec.default)
        elif spec.type is bool:
            default = str(spec.default).lower()
        else:
            default = str(spec.default)
        doc = spec.help + (f" Choices: {', '.join(spec.choices)}." if spec.choices else "")
        rows.append(f"| `{spec.key}` | `MYRM_{spec.key.upper()}` | {spec.type.__name__} | `{default}` | "
                    f"{_cell(doc)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
