"""Unified diffs for approval prompts (difflib), cut to a readable length."""

from __future__ import annotations

import difflib

from myrm_tui.agent.limits import APPROVAL_DIFF_MAX_LINES


def unified_diff(old: str, new: str, label: str) -> str:
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{label}",
            tofile=f"b/{label}",
        )
    )
    # difflib leaves lines without a final newline unterminated; join would glue them.
    lines = [line if line.endswith("\n") else line + "\n" for line in lines]
    if len(lines) > APPROVAL_DIFF_MAX_LINES:
        hidden = len(lines) - APPROVAL_DIFF_MAX_LINES
        lines = lines[:APPROVAL_DIFF_MAX_LINES] + [f"… {hidden:,} more diff lines not shown\n"]
    return "".join(lines)
