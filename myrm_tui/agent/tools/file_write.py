"""file_write: create or overwrite a text file in the workspace (parents created)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from myrm_tui.agent.limits import EDIT_MAX_BYTES
from myrm_tui.agent.read_registry import WRITE
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.diffs import unified_diff
from myrm_tui.agent.tools.file_guard import refuse_if_changed, remember_written
from myrm_tui.agent.tools.file_read import read_text_file
from myrm_tui.agent.tools.paths import display_path, resolve_writable_path
from myrm_tui.atomic_write import atomic_write, user_file_mode


def current_text(path: Path, label: str) -> str | None:
    """The file's text, None when it does not exist yet."""
    if not path.exists():
        return None
    if path.is_dir():
        raise ToolError(f"{label} is a directory; give a file path.")
    if path.stat().st_size > EDIT_MAX_BYTES:
        raise ToolError(f"{label} is larger than {EDIT_MAX_BYTES // (1024 * 1024)} MB; edit it with bash tools.")
    return read_text_file(path)


def write_atomically(path: Path, content: str) -> None:
    """The tools' write: all or nothing; a user's file keeps its permissions and a new one gets
    what their editor would give it (umask), since it is their work, not myrm's data."""
    atomic_write(path, content, new_file_mode=user_file_mode())


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


class FileWrite(Tool):
    name = "file_write"
    kind = "write"
    description = "Create a text file or replace its whole content. Prefer file_edit for changes to existing files."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative path."},
            "content": {"type": "string", "description": "The complete new file content."},
        },
        "required": ["path", "content"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        path = resolve_writable_path(str(args["path"]), ctx)
        label = display_path(path, ctx)
        old = current_text(path, label)
        refuse_if_changed(path, label, ctx)
        content = str(args["content"])
        verb = "create" if old is None else "overwrite"
        return ApprovalPreview(
            summary=f"{verb} {label} ({count_lines(content)} lines)",
            diff=unified_diff(old or "", content, label),
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_writable_path(str(args["path"]), ctx)
        label = display_path(path, ctx)
        old = current_text(path, label)
        refuse_if_changed(path, label, ctx)
        content = str(args["content"])
        try:
            write_atomically(path, content)
        except OSError as exc:
            raise ToolError(f"Cannot write {label}: {exc.strerror or exc}.") from exc
        remember_written(path, content, ctx, WRITE)
        verb = "created" if old is None else "overwrote"
        return ToolResult(f"{verb} {label} ({count_lines(content)} lines, {len(content.encode()):,} bytes)")
