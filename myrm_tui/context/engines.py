"""One ContextEngine per (store, session) in a process.

Why not one per Agent: the agent is rebuilt whenever its fingerprint changes (a settings or
model switch), but the engine's incremental state (rendered rows, cache warmth, the previous
request for the cache-break detector) belongs to the session and must survive the rebuild.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from myrm_tui.context.engine import ContextEngine
from myrm_tui.fenced_files import open_target, split_relative

_ENGINES: dict[tuple[str, str], ContextEngine] = {}
_LOCK = threading.Lock()


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


def engine_for(store: Any, session_id: str, *, workspace: Path | None = None, **kwargs: Any) -> ContextEngine:
    key = (str(getattr(store, "root", id(store))), session_id)
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None or engine.store is not store:
            if workspace is not None and "file_reader" not in kwargs:
                kwargs["file_reader"] = workspace_reader(workspace)
            engine = ContextEngine(store, session_id, **kwargs)
            _ENGINES[key] = engine
        elif kwargs.get("file_reader") is not None:
            # The engine outlives agents (a rebuild, the replay building it first): the newest
            # agent's reader (it records what a post-compaction reread showed the model) wins.
            engine.summaries.file_reader = kwargs["file_reader"]
        return engine


def forget(store: Any, session_id: str | None = None) -> None:
    """Drop cached engines (a closed store, a deleted session)."""
    root = str(getattr(store, "root", id(store)))
    with _LOCK:
        for key in [k for k in _ENGINES if k[0] == root and (session_id is None or k[1] == session_id)]:
            del _ENGINES[key]
