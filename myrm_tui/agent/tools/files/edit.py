"""file_edit: exact search/replace in one file.

Why exact matching (no fuzzy apply): a fuzzy edit that lands in the wrong place is worse than a
clear refusal; the error shows the nearest similar line so the model can correct its `old`.
"""

from __future__ import annotations

import difflib
from typing import Any

from myrm_tui.agent.read_registry import EDIT
from myrm_tui.agent.tools.base import ApprovalPreview, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.files.diffs import unified_diff
from myrm_tui.agent.tools.files.guard import refuse_if_changed, remember_written
from myrm_tui.agent.tools.files.paths import FencedPath, display_path, fence_writable
from myrm_tui.agent.tools.files.read import text_of
from myrm_tui.agent.tools.files.write import WritingTool, seen_bytes, writable_target, write_file

# Similarity (difflib ratio) a line needs to be offered as "did you mean"; below it the hint
# would mislead more than help.
NEAREST_LINE_CUTOFF = 0.6
# Line numbers listed in a several-matches error.
MAX_MATCH_LINES_LISTED = 10


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _match_offsets(text: str, old: str) -> list[int]:
    offsets, start = [], 0
    while (found := text.find(old, start)) != -1:
        offsets.append(found)
        start = found + len(old)
    return offsets


def _nearest_line_hint(text: str, old: str) -> str:
    needle = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if not needle:
        return ""
    lines = text.splitlines()
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(needle, stripped, n=1, cutoff=NEAREST_LINE_CUTOFF)
    if not close:
        return ""
    number = stripped.index(close[0]) + 1
    return f" The most similar line is {number}: {lines[number - 1].strip()!r}."


def apply_edit(text: str, old: str, new: str, replace_all: bool, label: str) -> tuple[str, list[int]]:
    """New text and the 1-based line numbers where matches started; ToolError when ambiguous."""
    if old == "":
        raise ToolError("`old` is empty; give the exact text to replace (use file_write for new files).")
    if old == new:
        raise ToolError("`old` and `new` are identical; nothing would change.")
    offsets = _match_offsets(text, old)
    if not offsets:
        raise ToolError(
            f"`old` was not found in {label} (it must match exactly, whitespace included)."
            + _nearest_line_hint(text, old)
            + " Read the file and copy the text exactly."
        )
    lines = [_line_of(text, o) for o in offsets]
    if len(offsets) > 1 and not replace_all:
        listed = ", ".join(str(n) for n in lines[:MAX_MATCH_LINES_LISTED])
        more = "…" if len(lines) > MAX_MATCH_LINES_LISTED else ""
        raise ToolError(
            f"`old` matches {len(offsets)} places in {label} (lines {listed}{more}); include more "
            "surrounding text to make it unique, or set replace_all=true."
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return updated, lines


class FileEdit(WritingTool):
    name = "file_edit"
    kind = "write"
    description = (
        "Replace an exact piece of text in a file with new text. `old` must match exactly once "
        "(whitespace included) unless replace_all is true."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative path."},
            "old": {"type": "string", "description": "Exact text to find."},
            "new": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
        },
        "required": ["path", "old", "new"],
    }

    def _edit(self, args: dict[str, Any], text: str, label: str) -> tuple[str, list[int]]:
        return apply_edit(text, str(args["old"]), str(args["new"]), bool(args.get("replace_all", False)), label)

    def _preview_of(
        self, fenced: FencedPath, label: str, old: bytes | None, args: dict[str, Any], ctx: ToolContext
    ) -> ApprovalPreview:
        if old is None:
            raise ToolError(f"{label} does not exist; create it with file_write.")
        refuse_if_changed(fenced.path, old, label, ctx)
        text = text_of(old, label)
        updated, lines = self._edit(args, text, label)
        where = f"line {lines[0]}" if len(lines) == 1 else f"{len(lines)} places"
        return ApprovalPreview(summary=f"edit {label} ({where})", diff=unified_diff(text, updated, label))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        fenced = fence_writable(str(args["path"]), ctx)
        label = display_path(fenced.path, ctx)
        with writable_target(fenced, label, create=False) as (target, data):
            data = await seen_bytes(fenced, label, ctx, data)
            if data is None:
                raise ToolError(f"{label} does not exist; create it with file_write.")
            refuse_if_changed(fenced.path, data, label, ctx)
            updated, lines = self._edit(args, text_of(data, label), label)
            await write_file(target, fenced, label, updated, ctx)
        remember_written(fenced.path, updated, ctx, EDIT)
        if len(lines) == 1:
            return ToolResult(f"edited {label}: replaced 1 occurrence at line {lines[0]}")
        return ToolResult(f"edited {label}: replaced {len(lines)} occurrences (lines {', '.join(map(str, lines))})")
