"""Where `/export` and the sessions screen write a session (pure path logic; no Textual).

Why not the workspace by default: an export holds the whole conversation, and a file dropped
in the repository root gets swept into the next `git add -A` and pushed. The default is the
user's config folder (`<config dir>/exports/`); the repository only when the user names it.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.settings.paths import user_config_dir
from myrm_tui.tui.formatting import short_id

# The folder under the user config dir that holds TUI exports.
EXPORTS_DIR_NAME = "exports"


def export_file_name(session_id: str) -> str:
    return f"myrm-session-{short_id(session_id)}.md"


def default_export_path(session_id: str) -> Path:
    return user_config_dir() / EXPORTS_DIR_NAME / export_file_name(session_id)


def export_target(argument: str, session_id: str, workspace: Path) -> Path:
    """The file `/export [PATH]` writes: the default without PATH; PATH as given otherwise
    (relative to the workspace, `~` expanded); a folder (existing, or written with a trailing
    slash) gets the default file name inside it."""
    if not argument.strip():
        return default_export_path(session_id)
    text = argument.strip()
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = Path(workspace) / path
    if text.endswith(("/", "\\")) or path.is_dir():
        path = path / export_file_name(session_id)
    return path
