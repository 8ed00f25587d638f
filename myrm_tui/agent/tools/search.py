"""grep and glob over the workspace, in pure Python so they behave the same on every machine.

Results are sorted (file path, then line) so the same tree gives the same bytes: a repeated
search costs no prompt-cache miss.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from myrm_tui.agent.limits import (
    BINARY_SNIFF_BYTES,
    GLOB_MAX_RESULTS,
    GREP_MAX_FILE_BYTES,
    GREP_MAX_LINE_CHARS,
    GREP_MAX_MATCHES,
    SKIP_DIRS,
)
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.paths import display_path, resolve_path


def _walk_files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            yield Path(folder) / name


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
    parameters: ClassVar[dict[str, Any]] = {
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
        for file in _walk_files(root):
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
        return ToolResult("\n".join(lines))


class Glob(Tool):
    name = "glob"
    description = "List workspace files matching a glob pattern ('**' recurses), sorted, capped."
    parameters: ClassVar[dict[str, Any]] = {
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
        try:
            found = sorted(
                display_path(p, ctx) for p in root.glob(pattern)
                if not SKIP_DIRS.intersection(p.relative_to(root).parts)
            )
        except (ValueError, NotImplementedError) as exc:
            raise ToolError(f"Invalid glob pattern {pattern!r}: {exc}.") from exc
        if not found:
            return ToolResult(f"no files match {pattern!r}")
        lines = found[:GLOB_MAX_RESULTS]
        if len(found) > GLOB_MAX_RESULTS:
            lines.append(f"[{len(found) - GLOB_MAX_RESULTS:,} more not shown; narrow the pattern]")
        return ToolResult("\n".join(lines))
