"""file_read: text of a workspace file or a vault handle, whole or by 1-based line range.

Lines end at "\n" only, the way `sed -n 'a,bp'`, the vault and ctx_expand count them: a stray
"\r", form feed or U+2028 inside a line must not shift the numbers, or a range the model got
from one tool would show different lines in another.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from myrm_tui.agent.limits import BINARY_SNIFF_BYTES, FILE_READ_MAX_LINES
from myrm_tui.agent.read_registry import RANGE, READ, ReadRegistry
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.files.editor_files import editor_bytes, reading_editor
from myrm_tui.agent.tools.files.paths import FencedPath, display_path, fence
from myrm_tui.context.recall.select import split_lines
from myrm_tui.fenced_files import FenceError
from myrm_tui.store.vault import Vault


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def read_fenced(fenced: FencedPath, label: str, *, limit: int | None = None) -> bytes | None:
    """The bytes of the file at `fenced`, read from the handle of its no-follow walk (the file
    checked is the file read); None when there is no file. ToolError for a folder, a link on the
    way or as the file, and a FIFO, device or socket (refused without blocking the turn)."""
    try:
        with fenced.open() as target:
            found = target.lstat()
            if found is None:
                return None
            if stat.S_ISDIR(found.st_mode):
                raise ToolError(f'{label} is a directory; use glob("{label}/*") to list it.')
            return target.read_bytes(limit=limit)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise ToolError(f'{label} is a directory; use glob("{label}/*") to list it.') from None
    except FenceError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"Cannot read {label}: {exc.strerror or exc}.") from exc


def _read_source(path_arg: str, ctx: ToolContext) -> tuple[str, bytes, Path | None]:
    """(label, bytes, the file's path or None for a vault handle)."""
    if path_arg.startswith(Vault.HANDLE_PREFIX):
        if ctx.vault is None:
            raise ToolError("No vault is open in this session, so vault:// handles cannot be read.")
        try:
            data = ctx.vault.read_bytes(path_arg)
        except Exception as exc:  # VaultError and OS errors read the same to the model
            raise ToolError(f"Cannot read {path_arg}: {exc}. Use a handle exactly as shown in a result.") from exc
        label, path = path_arg, None
    else:
        fenced = fence(path_arg, ctx)
        label = display_path(fenced.path, ctx)
        found = read_fenced(fenced, label)
        if found is None:
            raise ToolError(f"{label} does not exist; check the path (glob can list files).")
        data, path = found, fenced.path
    if looks_binary(data):
        raise ToolError(f"{label} is a binary file ({len(data):,} bytes); file_read shows text files only.")
    return label, data, path


def _window(total: int, start: int | None, end: int | None, label: str) -> tuple[int, int]:
    first = 1 if start is None else start
    if first < 1:
        raise ToolError("start_line counts from 1.")
    if total and first > total:
        raise ToolError(f"{label} has {total:,} lines; start_line {first} is past the end.")
    last = total if end is None else min(end, total)
    if last < first and total:
        raise ToolError(f"end_line {end} is before start_line {first}.")
    return first, last


def _remember(args: dict[str, Any], data: bytes, path: Path | None, ctx: ToolContext) -> None:
    """Record what the model is shown (agent/read_registry.py). A line range counts too: the
    guard looks for changes made since the read, not for lines the model skipped."""
    registry = ReadRegistry(ctx.store, ctx.session_id, ctx.workspace)
    if path is None:
        registry.accept_offer(str(args["path"]))
        return
    ranged = args.get("start_line") is not None or args.get("end_line") is not None
    registry.record(path, data, RANGE if ranged else READ)


class FileRead(Tool):
    name = "file_read"
    description = (
        "Read a text file in the workspace, or a vault:// handle from an earlier result. "
        "Optional 1-based inclusive line range. Large files are cut; the header says how to read on."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative path, or a vault://… handle."},
            "start_line": {"type": "integer", "description": "First line to show (1-based)."},
            "end_line": {"type": "integer", "description": "Last line to show (inclusive)."},
        },
        "required": ["path"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"read {args.get('path')}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        label, data, path = _read_source(str(args["path"]), ctx)
        editor = reading_editor(ctx)
        if editor is not None and path is not None:  # inside an editor: its buffer, unsaved text included
            buffered = await editor_bytes(editor, fence(str(args["path"]), ctx), label)
            data = data if buffered is None else buffered
        text = data.decode("utf-8", errors="replace")
        if not text:
            _remember(args, data, path, ctx)
            return ToolResult(f"[{label}: empty file]")
        lines = [line + "\n" for line in split_lines(text)]
        total = len(lines)
        first, last = _window(total, args.get("start_line"), args.get("end_line"), label)
        _remember(args, data, path, ctx)
        cap_chars = ctx.settings.tool_output_cap
        shown: list[str] = []
        size = 0
        for index in range(first - 1, last):
            if len(shown) >= FILE_READ_MAX_LINES or (shown and size + len(lines[index]) > cap_chars):
                break
            shown.append(lines[index])
            size += len(lines[index])
        shown_last = first + len(shown) - 1
        body = "".join(shown)
        if len(body) > cap_chars:  # one giant line
            body = body[:cap_chars] + f"\n[line {first} cut at {cap_chars:,} chars]"
        header = f"[{label} · lines {first}-{shown_last} of {total:,}]"
        if shown_last < last:
            body = body.rstrip("\n") + (
                f"\n[cut at line {shown_last:,}; read on with "
                f'file_read("{args["path"]}", start_line={shown_last + 1}, '
                f"end_line={min(last, shown_last + FILE_READ_MAX_LINES)})]"
            )
        return ToolResult(f"{header}\n{body}".rstrip("\n"))


def text_of(data: bytes, label: str) -> str:
    """Shared by write/edit: a text file's content, refusing binaries."""
    if looks_binary(data):
        raise ToolError(f"{label} is a binary file; file tools edit text files only.")
    return data.decode("utf-8", errors="replace")
