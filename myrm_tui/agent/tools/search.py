"""grep and glob over the workspace, in pure Python so they behave the same on every machine.

Results are sorted (file path, then line) so the same tree gives the same bytes: a repeated
search costs no prompt-cache miss.

Symlinks: a walk never follows a link whose target is outside the tree it searches (the
workspace, or an outside folder the user allowed and named explicitly), the rule file_read
applies to a path; such links are counted in a footer, never read or listed. Linked folders are
not descended at all (no loops), and only regular files are read (a FIFO would hang grep).
Folders are walked and files read through handles opened without following links
(myrm_tui/fenced_files.py): a command the model started can swap a folder for a link while the
walk runs, and a path listed then read again would follow it out.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from myrm_tui.agent.limits import (
    BINARY_SNIFF_BYTES,
    GLOB_MAX_RESULTS,
    GREP_MAX_FILE_BYTES,
    GREP_MAX_LINE_CHARS,
    GREP_MAX_MATCHES,
    SKIP_DIRS,
)
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.files.paths import display_path, inside, resolve_path
from myrm_tui.fenced_files import FenceError, Folder, open_root, walk
from myrm_tui.fenced_paths import read_inside, user_file


@dataclass
class _LinksOut:
    """Links skipped because they lead out of the searched tree (reported, never followed)."""

    count: int = 0

    def footer(self) -> list[str]:
        if not self.count:
            return []
        return [f"[{self.count} symlink(s) pointing outside the workspace not followed]"]


def _fence_of(root: Path, ctx: ToolContext) -> Path:
    """The tree links may point into: the workspace, or the outside folder the user named."""
    workspace = ctx.workspace.resolve()
    return workspace if root.is_relative_to(workspace) else root


# Reads one found file: at most `limit + 1` bytes, through a handle (see `_walk_files`).
Reader = Callable[[int], bytes]


def _walk_files(root: Path, fence: Path, links_out: _LinksOut) -> Iterator[tuple[Path, Reader]]:
    """Each regular file under `root` (or `root` itself), with the way to read it.

    Why handles: a command the model started can swap a folder for a link to the user's config
    while grep walks; a path listed and then read again would follow it. So the folders are
    opened one name at a time from the fence's handle without following links
    (myrm_tui/fenced_files.py), and a file is read through the folder handle it was listed in.
    A folder that turns into a link between the listing and the descent is refused and counted
    with the links out; a file link that stays inside the fence is read by `read_inside`, which
    walks to its target without following anything either."""
    try:
        info = os.stat(root)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        if stat.S_ISREG(info.st_mode):
            yield root, functools.partial(_read_named, root, fence)
        return
    try:
        with open_root(fence) as base:
            top = walk(base, root.relative_to(fence).parts)
    except FenceError:
        links_out.count += 1
        return
    except (OSError, ValueError):
        return
    with top:
        yield from _walk_folder(top, fence, links_out)


def _read_named(path: Path, fence: Path, limit: int) -> bytes:
    """A file named as the search root: under the fence, or the outside file the user named."""
    if path == fence:
        with user_file(path) as target:
            return target.read_bytes(limit=limit)
    data = read_inside(fence, path, limit=limit)
    if data is None:
        raise FileNotFoundError(path)
    return data


def _walk_folder(folder: Folder, fence: Path, links_out: _LinksOut) -> Iterator[tuple[Path, Reader]]:
    try:
        names = sorted(folder.names())
    except OSError:
        return
    below = []
    for name in names:
        try:
            info = folder.lstat(name)
        except OSError:
            continue
        if info is None:
            continue
        path = folder.path / name
        if stat.S_ISLNK(info.st_mode):
            if not inside(path, fence):
                links_out.count += 1
            elif path.is_file():  # linked folders are not descended (no loops)
                yield path, functools.partial(_read_named, path, fence)
        elif stat.S_ISDIR(info.st_mode):
            if name not in SKIP_DIRS:
                below.append(name)
        elif stat.S_ISREG(info.st_mode):
            yield path, functools.partial(_read_listed, folder, name)
    for name in below:
        try:
            child = folder.child(name)
        except FenceError:  # swapped for a link (or a file) since the listing: never entered
            links_out.count += 1
            continue
        except OSError:
            continue
        with child:
            yield from _walk_folder(child, fence, links_out)


def _read_listed(folder: Folder, name: str, limit: int) -> bytes:
    return folder.read_bytes(name, limit=limit)


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression {pattern!r}: {exc}. Python `re` syntax is used.") from exc


class Grep(Tool):
    name = "grep"
    description = (
        "Search file contents with a Python regular expression. Optional path (file or folder) "
        "and glob filter on file names (e.g. '*.py'). Returns path:line: text, capped."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Python regular expression."},
            "path": {"type": "string", "description": "File or folder to search (default: workspace)."},
            "glob": {"type": "string", "description": "Only files whose name or path matches, e.g. '*.py'."},
        },
        "required": ["pattern"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"grep {args.get('pattern')!r}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        regex = _compile(str(args["pattern"]))
        root = resolve_path(str(args.get("path") or "."), ctx)
        if not root.exists():
            raise ToolError(f"{args.get('path')} does not exist.")
        name_glob = args.get("glob")
        hits: list[str] = []
        skipped_large = 0
        truncated = False
        links_out = _LinksOut()
        for file, read in _walk_files(root, _fence_of(root, ctx), links_out):
            rel = display_path(file, ctx)
            if name_glob and not (Path(rel).match(name_glob) or file.match(name_glob)):
                continue
            try:
                data = read(GREP_MAX_FILE_BYTES)
            except OSError:  # gone, or a link now where a file was: skipped, never followed
                continue
            if len(data) > GREP_MAX_FILE_BYTES:
                skipped_large += 1
                continue
            if b"\x00" in data[:BINARY_SNIFF_BYTES]:
                continue
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if regex.search(line):
                    if len(hits) >= GREP_MAX_MATCHES:
                        truncated = True
                        break
                    shown = line if len(line) <= GREP_MAX_LINE_CHARS else line[:GREP_MAX_LINE_CHARS] + "…"
                    hits.append(f"{rel}:{number}: {shown}")
            if truncated:
                break
        lines = hits or [f"no matches for {args['pattern']!r}"]
        if truncated:
            lines.append(f"[stopped at {GREP_MAX_MATCHES} matches; narrow the pattern, path or glob]")
        if skipped_large:
            lines.append(f"[{skipped_large} file(s) over {GREP_MAX_FILE_BYTES // (1024 * 1024)} MB skipped]")
        lines += links_out.footer()
        return ToolResult("\n".join(lines))


class Glob(Tool):
    name = "glob"
    description = "List workspace files matching a glob pattern ('**' recurses), sorted, capped."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "description": "e.g. 'src/**/*.py'"}},
        "required": ["pattern"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"glob {args.get('pattern')!r}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str(args["pattern"]).strip()
        if not pattern:
            raise ToolError("The pattern is empty; e.g. '**/*.py'.")
        if os.path.isabs(pattern) or ".." in Path(pattern).parts:
            raise ToolError("glob patterns are relative to the workspace; remove the leading / or '..'.")
        root = ctx.workspace.resolve()
        links_out = _LinksOut()
        found = sorted(_glob(root, _pattern_parts(pattern), links_out))
        if not found:
            return ToolResult("\n".join([f"no files match {pattern!r}", *links_out.footer()]))
        lines = found[:GLOB_MAX_RESULTS]
        if len(found) > GLOB_MAX_RESULTS:
            lines.append(f"[{len(found) - GLOB_MAX_RESULTS:,} more not shown; narrow the pattern]")
        lines += links_out.footer()
        return ToolResult("\n".join(lines))


def glob_files(pattern: str, workspace: Path) -> list[str]:
    """Workspace-relative paths matching `pattern`, sorted, by the glob tool's own walk (no link
    out of the workspace entered): the files a map's `files` argument names."""
    if os.path.isabs(pattern) or ".." in Path(pattern).parts:
        raise ToolError("glob patterns are relative to the workspace; remove the leading / or '..'.")
    return sorted(_glob(workspace.resolve(), _pattern_parts(pattern), _LinksOut()))


def _pattern_parts(pattern: str) -> tuple[str, ...]:
    """The pattern's segments; `**` segments next to each other mean the same as one."""
    parts: list[str] = []
    for part in pattern.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "**" and parts and parts[-1] == "**":
            continue
        parts.append(part)
    if not parts:
        raise ToolError("The pattern names no files; e.g. '**/*.py'.")
    return tuple(parts)


def _glob(root: Path, pattern: tuple[str, ...], links_out: _LinksOut) -> Iterator[str]:
    """Workspace-relative paths matching `pattern`, found by our own walk so that no link out
    of the workspace is entered (pathlib's glob follows links for a `link/*` pattern, and
    `link/**` under a link to / would walk the whole disk)."""

    @functools.cache
    def matches(p: int, parts: tuple[str, ...], prefix: bool) -> bool:
        # prefix=True: could a path starting with `parts` still match (decides what to descend)?
        if not parts:
            return p < len(pattern) if prefix else pattern[p:] in ((), ("**",))
        if p == len(pattern):
            return False
        if pattern[p] == "**":
            return matches(p + 1, parts, prefix) or matches(p, parts[1:], prefix)
        return fnmatch.fnmatchcase(parts[0], pattern[p]) and matches(p + 1, parts[1:], prefix)

    def visit(folder: Folder, rel: tuple[str, ...]) -> Iterator[str]:
        # Listed and descended through handles (fenced_files.py), like grep's walk: a folder a
        # command swaps for a link meanwhile is refused by `child`, never listed through.
        dirs, files = _entries(folder)
        for name in dirs:
            if name in SKIP_DIRS:
                continue
            path, parts = folder.path / name, (*rel, name)
            listed, deeper = matches(0, parts, False), matches(0, parts, True)
            if not (listed or deeper):
                continue
            linked = folder.lstat(name)
            is_link = linked is not None and stat.S_ISLNK(linked.st_mode)
            if is_link and not inside(path, root):
                links_out.count += 1
                continue
            if listed:
                yield "/".join(parts)
            if deeper and not is_link:
                try:
                    child = folder.child(name)
                except FenceError:
                    links_out.count += 1
                    continue
                except OSError:
                    continue
                with child:
                    yield from visit(child, parts)
        for name in files:
            path = folder.path / name
            if not matches(0, (*rel, name), False):
                continue
            if path.is_symlink() and not inside(path, root):
                links_out.count += 1
                continue
            yield "/".join((*rel, name))

    try:
        top = open_root(root)
    except OSError:
        return
    with top:
        yield from visit(top, ())


def _entries(folder: Folder) -> tuple[list[str], list[str]]:
    """(folders, other entries) of `folder`, sorted; a link to a folder counts as a folder (it is
    listed, never entered), as `os.walk` sorts them."""
    dirs: list[str] = []
    files: list[str] = []
    try:
        names = sorted(folder.names())
    except OSError:
        return dirs, files
    for name in names:
        try:
            info = folder.lstat(name)
        except OSError:
            continue
        if info is None:
            continue
        is_dir = stat.S_ISDIR(info.st_mode) or (stat.S_ISLNK(info.st_mode) and (folder.path / name).is_dir())
        (dirs if is_dir else files).append(name)
    return dirs, files
