"""Reading and writing a file through the editor (ACP's fs capability), with the fence kept.

The editor is reached by path, and a path checked then reopened is a race (a command the model
started may swap the file for a link meanwhile). So the tools first walk the path without
following links, as for a disk read (tools/paths.py), and the editor is asked only for a regular
file that walk found; after the editor answers, a fresh walk must find the same file (device and
inode), or the answer is thrown away. After a write through the editor, the path must still be a
regular file reached without a link. What remains: a swap between the last check and the
editor's own open (a swap and a swap back for a read; for a write, the check after it reports the
link but cannot undo what the editor wrote through it), which no check outside the editor can
close (docs/acp.md and docs/security.md say so).
"""

from __future__ import annotations

import stat

from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.agent.tools.editor_port import EditorFiles
from myrm_tui.agent.tools.files.paths import FencedPath
from myrm_tui.fenced_files import FenceError

FileIdentity = tuple[int, int]  # (st_dev, st_ino)


def reading_editor(ctx: ToolContext) -> EditorFiles | None:
    return ctx.editor if ctx.editor is not None and ctx.editor.reads else None


def writing_editor(ctx: ToolContext) -> EditorFiles | None:
    return ctx.editor if ctx.editor is not None and ctx.editor.writes else None


def file_identity(fenced: FencedPath, label: str) -> FileIdentity | None:
    """The regular file at `fenced` now, walked without following links; None when there is none.
    ToolError for a link, a folder or a special file there."""
    try:
        with fenced.open() as target:
            found = target.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except FenceError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"Cannot reach {label}: {exc.strerror or exc}.") from exc
    if found is None:
        return None
    if not stat.S_ISREG(found.st_mode):
        raise ToolError(f"{label} is not a regular file; file tools use regular files only.")
    return (found.st_dev, found.st_ino)


async def editor_bytes(editor: EditorFiles, fenced: FencedPath, label: str) -> bytes | None:
    """The editor's text of the file (its buffer, unsaved changes included) as UTF-8 bytes, or
    None when the fence finds no file (the editor is not asked about a path that is not there)."""
    before = file_identity(fenced, label)
    if before is None:
        return None
    try:
        text = await editor.read_text(fenced.path)
    except Exception as exc:  # noqa: BLE001 - the editor's refusal is the call's error, said plainly
        raise ToolError(f"The editor could not read {label}: {exc}") from None
    try:
        after = file_identity(fenced, label)
    except ToolError:
        after = None  # a link or a special file now: replaced
    if after != before:
        raise ToolError(f"{label} was replaced while the editor read it; read it again.")
    return text.encode("utf-8")


async def editor_write(editor: EditorFiles, fenced: FencedPath, label: str, content: str) -> None:
    """Write through the editor, then check what the path holds: a regular file (an editor may
    save by rename, so the inode may change) or nothing yet (an editor may keep a new file as an
    unsaved buffer), never a link or a special file."""
    file_identity(fenced, label)  # a link or special file there now is refused before the editor is asked
    try:
        await editor.write_text(fenced.path, content)
    except Exception as exc:  # noqa: BLE001 - as above: the editor's sentence goes to the model
        raise ToolError(f"The editor could not write {label}: {exc}") from None
    try:
        file_identity(fenced, label)
    except ToolError as exc:
        raise ToolError(f"After the editor wrote {label}: {exc} Check it before going on.") from None
