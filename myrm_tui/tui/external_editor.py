"""Ctrl+G: edit the draft in $VISUAL / $EDITOR (the app suspends itself around the call)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual.app import SuspendNotSupported
from textual.screen import Screen

from myrm_tui.tui.widgets.prompt import PromptArea

# The editor every Unix has; only used when neither VISUAL nor EDITOR is set.
FALLBACK_EDITOR = "vi"


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    return shlex.split(env.get("VISUAL") or env.get("EDITOR") or FALLBACK_EDITOR)


def edit_text(text: str, command: list[str]) -> str:
    """Run the editor on a temp file holding `text`; the file's text afterwards (one trailing
    newline, which editors add, removed). Raises OSError/CalledProcessError when it fails."""
    fd, name = tempfile.mkstemp(prefix="myrm-draft-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        subprocess.run([*command, str(path)], check=True)
        edited = path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)
    return edited.removesuffix("\n")


def edit_draft(screen: Screen[Any], prompt: PromptArea) -> None:
    """The draft (paste chips expanded) to the editor and back into `prompt`; on any failure the
    draft stays as it was and the user is told why."""
    command = editor_command()
    try:
        with screen.app.suspend():
            edited = edit_text(prompt.expanded_text, command)
    except SuspendNotSupported:
        screen.notify("This terminal cannot hand over to an editor here.", severity="warning")
        return
    except (OSError, Exception) as exc:  # noqa: BLE001 - the draft stays as it was
        screen.notify(f"The editor ({' '.join(command)}) failed: {exc}. Your draft is unchanged.", severity="error")
        return
    prompt.load_text(edited)
    prompt.move_cursor(prompt.document.end)
    prompt.focus()
