"""The post-compaction reread's view of the workspace: a file as file_read would read it.

Why its own module: the engine (which rereads) and the agent (which records what the reread
showed the model, agent/read_registry.py) both need the same fenced read, and neither owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from myrm_tui.fenced_files import open_target, split_relative


def workspace_reader(workspace: Path, max_chars: int = 200_000) -> Callable[[str], str | None]:
    """Reads a workspace file for the post-compaction reread; None for anything unreadable,
    binary or outside the workspace. Read like file_read reads (myrm_tui/fenced_files.py): a
    no-follow walk, so neither a link nor a FIFO (which would hang the turn) is ever opened."""
    root = Path(workspace).resolve()

    def read(path: str) -> str | None:
        try:
            with open_target(root, split_relative(path)) as target:
                data = target.read_bytes(limit=max_chars)[:max_chars]
        except (OSError, ValueError):
            return None
        if b"\0" in data[:4096]:
            return None
        return data.decode("utf-8", errors="replace")

    return read
