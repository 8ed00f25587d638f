"""file_write: create or overwrite a text file in the workspace (parents created).

The file is read, checked (integrity guard) and replaced through one no-follow walk of its path
(tools/paths.py, myrm_tui/fenced_files.py): whatever runs meanwhile, the file written is the
file checked, and a symlink on the way is refused, never written through.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from myrm_tui.agent.limits import EDIT_MAX_BYTES
from myrm_tui.agent.read_registry import WRITE
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.files.diffs import unified_diff
from myrm_tui.agent.tools.files.editor_files import editor_bytes, editor_write, reading_editor, writing_editor
from myrm_tui.agent.tools.files.guard import refuse_if_changed, remember_written
from myrm_tui.agent.tools.files.paths import FencedPath, display_path, fence_writable
from myrm_tui.agent.tools.files.read import read_fenced, text_of
from myrm_tui.fenced_files import FenceError, Target, user_file_mode


def current_bytes(fenced: FencedPath, label: str) -> bytes | None:
    """The file's bytes (a preview's look; the write reads again through its own walk), None
    when it does not exist yet."""
    data = read_fenced(fenced, label, limit=EDIT_MAX_BYTES)
    return None if data is None else _checked(data, label)


def _checked(data: bytes, label: str) -> bytes:
    if len(data) > EDIT_MAX_BYTES:
        raise ToolError(f"{label} is larger than {EDIT_MAX_BYTES // (1024 * 1024)} MB; edit it with bash tools.")
    text_of(data, label)  # binaries are refused before anything is written
    return data


@contextmanager
def writable_target(fenced: FencedPath, label: str, *, create: bool = True) -> Iterator[tuple[Target, bytes | None]]:
    """The file's folder, walked once without following links (missing folders are made when
    `create`, else the file does not exist: ToolError), and its bytes now read through that walk
    (None: no file yet). Every check and the write happen inside, on this one handle."""
    try:
        target = fenced.open()
    except FileNotFoundError:  # a folder on the way is missing: the file is new
        if not create:
            raise ToolError(f"{label} does not exist; create it with file_write.") from None
        target = _open_creating(fenced, label)
    except NotADirectoryError:
        raise ToolError(f"A folder on the way to {label} is a file; give a path under folders.") from None
    except IsADirectoryError:
        raise ToolError(f"{label} is a directory; give a file path.") from None
    with target:
        try:
            found = target.lstat()
            if found is not None and stat.S_ISDIR(found.st_mode):
                raise ToolError(f"{label} is a directory; give a file path.")
            # A link, FIFO or device there raises the FenceError that says what it is.
            data = target.read_bytes(limit=EDIT_MAX_BYTES) if found is not None else None
        except FileNotFoundError:
            data = None  # removed meanwhile: the write creates it
        except FenceError as exc:
            raise ToolError(str(exc)) from None
        except OSError as exc:
            raise ToolError(f"Cannot read {label}: {exc.strerror or exc}.") from exc
        yield target, None if data is None else _checked(data, label)


def _open_creating(fenced: FencedPath, label: str) -> Target:
    try:
        return fenced.open(create_parents=True)
    except OSError as exc:
        raise ToolError(f"Cannot create the folders of {label}: {exc.strerror or exc}.") from exc


def write_through(target: Target, content: str, label: str) -> None:
    """The tools' write: all or nothing, through the checked folder's handle; a user's file keeps
    its permissions and a new one gets what their editor would give it (umask), since it is
    their work, not myrm's data."""
    try:
        target.replace(content, new_file_mode=user_file_mode())
    except FenceError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"Cannot write {label}: {exc.strerror or exc}.") from exc


async def seen_bytes(fenced: FencedPath, label: str, ctx: ToolContext, on_disk: bytes | None) -> bytes | None:
    """The file as the user sees it: the editor's buffer (unsaved changes included) when myrm runs
    inside an editor that reads files, else `on_disk` (read through the fence by the caller)."""
    editor = reading_editor(ctx)
    if on_disk is None or editor is None:
        return on_disk
    buffered = await editor_bytes(editor, fenced, label)
    return on_disk if buffered is None else _checked(buffered, label)


async def write_file(target: Target, fenced: FencedPath, label: str, content: str, ctx: ToolContext) -> None:
    """Through the editor when it writes files (the change shows in it, with its undo), else
    through the checked folder's handle."""
    editor = writing_editor(ctx)
    if editor is None:
        write_through(target, content, label)
    else:
        await editor_write(editor, fenced, label, content)


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


class WritingTool(Tool):
    """A tool that changes one file: its approval diff is taken against what the model would
    change, the editor's unsaved buffer when an editor is the file system (ACP), else the disk."""

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        fenced = fence_writable(str(args["path"]), ctx)
        label = display_path(fenced.path, ctx)
        return self._preview_of(fenced, label, current_bytes(fenced, label), args, ctx)

    async def approval_preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        fenced = fence_writable(str(args["path"]), ctx)
        label = display_path(fenced.path, ctx)
        old = await seen_bytes(fenced, label, ctx, current_bytes(fenced, label))
        return self._preview_of(fenced, label, old, args, ctx)

    def _preview_of(
        self, fenced: FencedPath, label: str, old: bytes | None, args: dict[str, Any], ctx: ToolContext
    ) -> ApprovalPreview:
        raise NotImplementedError


class FileWrite(WritingTool):
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

    def _preview_of(
        self, fenced: FencedPath, label: str, old: bytes | None, args: dict[str, Any], ctx: ToolContext
    ) -> ApprovalPreview:
        refuse_if_changed(fenced.path, old, label, ctx)
        content = str(args["content"])
        verb = "create" if old is None else "overwrite"
        return ApprovalPreview(
            summary=f"{verb} {label} ({count_lines(content)} lines)",
            diff=unified_diff(text_of(old or b"", label), content, label),
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        fenced = fence_writable(str(args["path"]), ctx)
        label = display_path(fenced.path, ctx)
        content = str(args["content"])
        with writable_target(fenced, label) as (target, old):
            old = await seen_bytes(fenced, label, ctx, old)
            refuse_if_changed(fenced.path, old, label, ctx)
            await write_file(target, fenced, label, content, ctx)
        remember_written(fenced.path, content, ctx, WRITE)
        verb = "created" if old is None else "overwrote"
        return ToolResult(f"{verb} {label} ({count_lines(content)} lines, {len(content.encode()):,} bytes)")
