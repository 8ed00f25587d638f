"""Path resolution for file tools: relative to the workspace, symlinks followed, fenced in.

Why resolve before checking: `../x`, an absolute path and a symlink that points out of the tree
all escape the same way once resolved, so one check after `resolve()` covers them all.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.tools.base import ToolContext, ToolError


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    if not raw or not raw.strip():
        raise ToolError("The path is empty; pass a file path relative to the workspace.")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute():
        candidate = ctx.workspace / candidate
    resolved = candidate.resolve(strict=False)
    root = ctx.workspace.resolve()
    if not ctx.settings.allow_outside_workspace and not resolved.is_relative_to(root):
        raise ToolError(
            f"{raw} resolves to {resolved}, outside the workspace {root}; file tools only touch "
            "files under the workspace (set allow_outside_workspace = true to allow this)."
        )
    return resolved


def display_path(path: Path, ctx: ToolContext) -> str:
    """Workspace-relative when possible: shorter for the model and stable across machines."""
    root = ctx.workspace.resolve()
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
