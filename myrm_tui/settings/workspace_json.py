"""The user's per-workspace JSON stores (trust decisions, "always allow" rules): reading one.

Why shared: both files are `{"workspaces": {<resolved path>: …}}` in the user's config folder,
and both must refuse, with the same words, to treat a broken file as empty (the next write would
then erase what the user decided). Each store cleans its own entries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_workspaces(path: Path, error: type[Exception], end: str = "") -> dict[str, Any]:
    """The raw `workspaces` table of `path`: {} when the file does not exist; `error` (its
    message ending with `end`) when it exists but cannot be read, is not JSON or has no table."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path} ({exc}){end}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON ({exc}){end}") from exc
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(workspaces, dict):
        raise error(f"{path} has no `workspaces` table{end}")
    return workspaces
