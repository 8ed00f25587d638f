"""Workspace root discovery."""

from __future__ import annotations

from pathlib import Path


def find_workspace_root(start: Path | None = None) -> Path:
    """Nearest directory at or above `start` holding `.git`, else `start` itself."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here
