"""Where a file tool's path leads: cleaned as text, links inside followed once, fenced in, then
walked without following links.

Why not `resolve()` and check alone: a path resolved at check time is walked again by the write,
and a command the model started can swap a folder for a symlink in between (a background bash job
did, and writes landed in the user's config). So the path is cleaned as text (`~`, `.`, `..`),
the links it holds at that moment are followed once to find where it leads (see `_followed`),
that place is fenced under the workspace (or under `/` when `allow_outside_workspace` lets it
out), and every operation then walks it one name at a time from a handle of that root without
following any link (myrm_tui/fenced_files.py). A link that appears on the way after the look is
refused with a sentence naming it and where it points; reads included, so a tool reads the file
it checked.

The workspace itself is opened by following the path the user started in (it may be reached
through a symlink: that is their choice); nothing below it is followed.

Writes pass one more check first, the protected paths (agent/permissions/protected_paths.py), on the same
cleaned path the walk then follows: that refusal holds whatever the settings, so it is the one
the model should hear.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.agent.permissions.protected_paths import protection_of, refusal
from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.fenced_files import FenceError, Target, open_target


@dataclass(frozen=True)
class FencedPath:
    """A path a file tool may use, and how to reach it without following a link."""

    raw: str  # as the model wrote it
    root: Path  # where the walk starts: the workspace as the user opened it, or "/" (allowed outside)
    names: tuple[str, ...]  # the names below `root`, the file's own last (empty: `root` itself)
    path: Path  # where that is: the resolved workspace (or "/") joined with `names`
    in_workspace: bool = True

    def open(self, *, create_parents: bool = False) -> Target:
        """The file's folder, walked without following (see the module docstring). ToolError
        for a link or a non-folder on the way; FileNotFoundError when a folder is missing (unless
        `create_parents`); IsADirectoryError for the root itself."""
        try:
            return open_target(self.root, self.names, create_parents=create_parents)
        except FenceError as exc:
            raise ToolError(str(exc)) from None


def _clean(raw: str, real_workspace: Path) -> Path:
    """`raw` as an absolute path, `~` expanded and `.`/`..` removed as text. Lexical on purpose:
    `a/../b` never visits `a`, so no link there can take the walk anywhere."""
    if not raw or not raw.strip():
        raise ToolError("The path is empty; pass a file path relative to the workspace.")
    if "\0" in raw:
        raise ToolError("The path contains a NUL character; pass a plain file path.")
    candidate = Path(raw).expanduser()
    return Path(os.path.normpath(candidate if candidate.is_absolute() else real_workspace / candidate))


def _followed(clean: Path) -> Path:
    """`clean` with the links it holds now followed (a loop: unchanged, the walk refuses it).

    Why follow once here: repositories keep links inside themselves (`README.md -> docs/x.md`,
    a `current -> v2` folder), and a tool refusing them is useless there. Following them is safe
    because it decides only *where* the walk goes: the fence then checks that place, and the walk
    to it follows nothing. If a command swaps a folder for a link between this look and the walk,
    the walk meets the link and refuses; it never lands where the link points."""
    try:
        return clean.resolve()
    except (OSError, RuntimeError):
        return clean


def place(raw: str, workspace: Path, *, allow_outside: bool) -> FencedPath:
    """Where `raw` (relative to `workspace`, or absolute) is, cleaned as text, its links followed
    once and fenced: ToolError when it is empty or leads out of the workspace (unless
    `allow_outside`). Nothing is opened yet."""
    real = workspace.resolve()
    written = _clean(raw, real)
    clean = _followed(written)
    bases = tuple(dict.fromkeys((real, Path(os.path.normpath(workspace.absolute())))))
    for base in bases:
        if clean == base or clean.is_relative_to(base):
            names = clean.relative_to(base).parts
            return FencedPath(raw, workspace, names, real.joinpath(*names))
    if any(written.is_relative_to(base) for base in bases):
        # A link the repository holds chose this way out, not the user: refused even when
        # allow_outside_workspace is on (the user can name the target itself).
        raise ToolError(
            f"{raw} is a symbolic link, or passes through one, to {clean}, outside the workspace {real}; "
            "links are followed only while they stay inside it (name the target path itself to use it)."
        )
    if not allow_outside:
        raise ToolError(
            f"{raw} leads to {clean}, outside the workspace {real}; file tools only touch files under the "
            "workspace (set allow_outside_workspace = true to allow this)."
        )
    return FencedPath(raw, Path("/"), clean.parts[1:], clean, in_workspace=False)


def fence(raw: str, ctx: ToolContext) -> FencedPath:
    """The path to read; ToolError when it leaves the workspace (unless allowed)."""
    return place(raw, ctx.workspace, allow_outside=bool(ctx.settings.allow_outside_workspace))


def fence_writable(raw: str, ctx: ToolContext) -> FencedPath:
    """The path to write; ToolError when it is protected, whatever the approval policy and
    allow_outside_workspace say, or when it leaves the workspace (unless allowed)."""
    clean = _clean(raw, ctx.workspace.resolve())
    item = protection_of(clean, ctx.workspace)
    shown = clean
    if item is None:
        # Where its links lead now: when that is protected, the refusal that holds whatever the
        # settings is the one the model should hear (not "a link out of the workspace").
        shown = _followed(clean)
        item = protection_of(shown, ctx.workspace) if shown != clean else None
    if item is not None:
        raise ToolError(refusal(raw, item, shown))
    # The protection check is made on the very names the walk will open, from the one look that
    # chose them: checking one resolve and walking another let a link swapped in between (a
    # background job flipping `x` between `safe/` and `.git/`) pass the check and land in .git.
    fenced = fence(raw, ctx)
    item = protection_of(fenced.path, ctx.workspace)
    if item is not None:
        raise ToolError(refusal(raw, item, fenced.path))
    return fenced


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    """A folder to search (grep, glob), symlinks resolved; ToolError when it leaves the
    workspace (unless allowed). The search tools fence what they list themselves; a file is
    read with `fence`."""
    if not raw or not raw.strip():
        raise ToolError("The path is empty; pass a file path relative to the workspace.")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute():
        candidate = ctx.workspace / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except RuntimeError as exc:  # Python 3.11 raises it for a symlink loop
        raise ToolError(f"{raw} is a symlink loop; give a path that leads to a file.") from exc
    root = ctx.workspace.resolve()
    if not ctx.settings.allow_outside_workspace and not resolved.is_relative_to(root):
        raise ToolError(
            f"{raw} resolves to {resolved}, outside the workspace {root}; file tools only touch "
            "files under the workspace (set allow_outside_workspace = true to allow this)."
        )
    return resolved


def inside(path: Path, root: Path) -> bool:
    """Whether `path`, followed through every symlink, stays under `root` (already resolved)."""
    try:
        return path.resolve(strict=False).is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop resolves to nothing we could read
        return False


def display_path(path: Path, ctx: ToolContext) -> str:
    """Workspace-relative when possible: shorter for the model and stable across machines."""
    root = ctx.workspace.resolve()
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
