"""Which workspace files a shell call changed, stored on its result.

Why on the stored result: the post-compaction reread (context/stages/post_compaction_reread.py)
shows the model the files it changed, newest first, and reads that from the session's rows, so
replay and a resumed session see the same list. File tools name their file in their arguments;
a bash call does not, and only the git snapshot taken around it (agent/undo/git_snapshots.py)
knows what it changed. The agent stores those paths beside the content under `CHANGED_FILES_KEY`;
the engine's normalize stage drops the key, so providers never see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# The key on a stored `role: tool` message; prefixed so it can never collide with a provider field.
CHANGED_FILES_KEY = "myrm_changed_files"
# Paths kept per call. The reread takes 5 files by default; a call that changed more than this
# (a formatter, a code generator, an install) changed files the model did not write line by line,
# and a list of thousands would bloat every stored row for no reader.
MAX_CHANGED_FILES = 20


def with_changed_files(message: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """`message` (a tool result) naming the files its call changed; unchanged when none."""
    if not paths:
        return message
    return {**message, CHANGED_FILES_KEY: list(paths[:MAX_CHANGED_FILES])}


def changed_files(message: dict[str, Any]) -> list[str]:
    """The workspace-relative paths a stored tool result says its call changed."""
    value = message.get(CHANGED_FILES_KEY)
    if not isinstance(value, list):
        return []
    return [p for p in value if isinstance(p, str) and p]
