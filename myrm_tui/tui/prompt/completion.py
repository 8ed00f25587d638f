"""What the completion popup offers at the cursor: slash commands or workspace paths (pure).

Finding the token at the cursor and splicing the choice back are plain string functions so the
tricky cases (a command mid-typing, an @path after other words, several lines) are unit-tested
without a terminal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.tui.constants import FILE_COMPLETION_MAX_PATHS

# Folders never offered for @file: tool caches, dependencies, VCS and myrm's own store.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".myrm",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        "dist",
        "build",
        ".idea",
    }
)


@dataclass(frozen=True)
class CompletionRequest:
    kind: str  # "slash" or "file"
    query: str  # what was typed after "/" or "@" (the slash is kept for commands)
    row: int
    start: int  # column where the token starts (the "/" or "@")
    end: int  # column after the token


def completion_at(text: str, row: int, column: int) -> CompletionRequest | None:
    lines = text.split("\n")
    if row >= len(lines):
        return None
    line = lines[row]
    column = min(column, len(line))
    # slash commands: only as the very first word of the message, while it is being typed
    if row == 0 and line.startswith("/") and " " not in line[:column] and len(lines) == 1:
        end = len(line.split(" ", 1)[0])
        return CompletionRequest("slash", line[:end], 0, 0, end)
    start = column
    while start > 0 and not line[start - 1].isspace():
        start -= 1
    token = line[start:column]
    if token.startswith("@"):
        end = column
        while end < len(line) and not line[end].isspace():
            end += 1
        return CompletionRequest("file", token[1:], row, start, end)
    return None


def apply_completion(text: str, request: CompletionRequest, choice: str) -> tuple[str, tuple[int, int]]:
    """The text with the token replaced (plus a space) and where the cursor goes."""
    lines = text.split("\n")
    line = lines[request.row]
    inserted = (choice if request.kind == "slash" else f"@{choice}") + " "
    rest = line[request.end :].lstrip(" ")
    lines[request.row] = line[: request.start] + inserted + rest
    return "\n".join(lines), (request.row, request.start + len(inserted))


def list_workspace_files(root: Path, limit: int = FILE_COMPLETION_MAX_PATHS) -> list[str]:
    """Workspace-relative POSIX paths of files (hidden and dependency folders skipped)."""
    found: list[str] = []
    root = Path(root)
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        base = Path(directory).relative_to(root)
        for name in sorted(files):
            if name.startswith("."):
                continue
            found.append((base / name).as_posix())
            if len(found) >= limit:
                return found
    return found
