"""Path resolution for file tools: relative to the workspace, symlinks followed, fenced in.

Why resolve before checking: `../x`, an absolute path and a symlink that points out of the tree
all escape the same way once resolved, so one check after `resolve()` covers them all. Writes
pass one more check, the protected paths (agent/protected_paths.py), before the fence: that
refusal holds whatever the settings, so it is the one the model should hear.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.protected_paths import protection_of, refusal
from myrm_tui.agent.tools.base import ToolContext, ToolError


def _resolve(raw: str, ctx: ToolContext) -> Path:
    if not raw or not raw.strip():
        raise ToolError("The path is empty; pass a file path relative to the workspace.")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute():
        candidate = ctx.workspace / candidate
    try:
        return candidate.resolve(strict=False)
    except RuntimeError as exc:  # Python 3.11 raises it for a symlink loop
        raise ToolError(f"{raw} is a symlink loop; give a path that leads to a file.") from exc


def _fence(raw: str, resolved: Path, ctx: ToolContext) -> Path:
    root = ctx.workspace.resolve()
    if not ctx.settings.allow_outside_workspace and not resolved.is_relative_to(root):
        raise ToolError(
            f"{raw} resolves to {resolved}, outside the workspace {root}; file tools only touch "
            "files under the workspace (set allow_outside_workspace = true to allow this)."
        )
    return resolved


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    """The resolved path to read; ToolError when it leaves the workspace (unless allowed)."""
    return _fence(raw, _resolve(raw, ctx), ctx)


def resolve_writable_path(raw: str, ctx: ToolContext) -> Path:
    """The resolved path to write; ToolError when it is protected, whatever the approval policy
    and allow_outside_workspace say, or when it leaves the workspace (unless allowed)."""
    resolved = _resolve(raw, ctx)
    item = protection_of(resolved, ctx.workspace)
    if item is not None:
        raise ToolError(refusal(raw, item, resolved))
    return _fence(raw, resolved, ctx)


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
