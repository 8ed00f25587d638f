"""The editor's file system as the file tools see it, when myrm runs inside an editor (ACP's
`fs/read_text_file` and `fs/write_text_file`).

Why a port: the ACP agent sits above the agent in the layers and owns the connection; the tools
name only this. Why the editor at all: its buffer is what the user sees (unsaved changes
included) and a write through it shows up in the editor, with its undo. It is a transport, not a
widening: the tools fence and check every path first (agent/tools/files/editor_files.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class EditorFiles(Protocol):
    """`reads`/`writes`: which of the two the editor offered; an absent one stays on disk."""

    @property
    def reads(self) -> bool: ...

    @property
    def writes(self) -> bool: ...

    async def read_text(self, path: Path) -> str:
        """The editor's text of the file at this absolute path; raises when it cannot."""
        ...

    async def write_text(self, path: Path, content: str) -> None:
        """Replace the file's text in the editor (which saves it); raises when it cannot."""
        ...
