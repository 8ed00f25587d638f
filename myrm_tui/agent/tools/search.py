"""grep and glob over the workspace, in pure Python so they behave the same on every machine.

Results are sorted (file path, then line) so the same tree gives the same bytes: a repeated
search costs no prompt-cache miss.

Symlinks: a walk never follows a link whose target is outside the tree it searches (the
workspace, or an outside folder the user allowed and named explicitly), the rule file_read
applies to a path; such links are counted in a footer, never read or listed. Linked folders are
not descended at all (no loops), and only regular files are read (a FIFO would hang grep).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from collections.abc import Iterator
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
from myrm_tui.agent.tools.paths import display_path, inside, resolve_path


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


def _is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _walk_files(root: Path, fence: Path, links_out: _LinksOut) -> Iterator[Path]:
    if not root.is_dir():
        if _is_regular_file(root):
            yield root
        return
    for folder, dirs, files in os.walk(root):  # followlinks=False: linked folders are not entered
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        links_out.count += sum(
            1 for d in dirs if (Path(folder) / d).is_symlink() and not inside(Path(folder) / d, fence)
        )
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_symlink() and not inside(path, fence):
                links_out.count += 1
            elif _is_regular_file(path):
                yield path


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
        for file in _walk_files(root, _fence_of(root, ctx), links_out):
            rel = display_path(file, ctx)
            if name_glob and not (Path(rel).match(name_glob) or file.match(name_glob)):
                continue
            try:
                if file.stat().st_size > GREP_MAX_FILE_BYTES:
                    skipped_large += 1
                    continue
                data = file.read_bytes()
            except OSError:
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

    for folder, dirs, files in os.walk(root):  # followlinks=False: linked folders are not entered
        base = Path(folder)
        rel = base.relative_to(root).parts
        kept = []
        for name in sorted(dirs):
            if name in SKIP_DIRS:
                continue
            path, parts = base / name, (*rel, name)
            listed, deeper = matches(0, parts, False), matches(0, parts, True)
            if not (listed or deeper):
                continue
            if path.is_symlink() and not inside(path, root):
                links_out.count += 1
                continue
            if listed:
                yield "/".join(parts)
            if deeper and not path.is_symlink():
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = base / name
            if not matches(0, (*rel, name), False):
                continue
            if path.is_symlink() and not inside(path, root):
                links_out.count += 1
                continue
            yield "/".join((*rel, name))
