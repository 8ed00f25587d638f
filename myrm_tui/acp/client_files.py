"""The editor's `fs/read_text_file` and `fs/write_text_file` as the file tools' EditorFiles.

Used only for what the client offered in `initialize` (its fs capability): a read shows the
editor's buffer, unsaved changes included; a write lands in the editor (which saves it) so the
user sees it there. Paths are fenced and checked by the tools before the editor is asked
(agent/tools/files/editor_files.py); this class only carries the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities


@dataclass(frozen=True)
class ClientFiles:
    client: Client
    session_id: str
    reads: bool
    writes: bool

    async def read_text(self, path: Path) -> str:
        response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        return response.content

    async def write_text(self, path: Path, content: str) -> None:
        await self.client.write_text_file(session_id=self.session_id, path=str(path), content=content)


def client_files(capabilities: ClientCapabilities | None, client: Client, session_id: str) -> ClientFiles | None:
    """The client's files for this session, or None when it offered neither method."""
    fs = capabilities.fs if capabilities is not None else None
    reads, writes = bool(fs and fs.read_text_file), bool(fs and fs.write_text_file)
    if not (reads or writes):
        return None
    return ClientFiles(client, session_id, reads, writes)
