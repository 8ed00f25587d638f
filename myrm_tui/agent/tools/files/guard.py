"""The integrity guard of file_write and file_edit: no write over a change the model never saw.

What "saw" means, and why a never-read file passes, is in agent/read_registry.py. The refusal
hands over the file's current content as a vault handle, stored and indexed like a spilled
output, so the model can look at what changed without guessing; reading that handle (or the
file) counts as seeing it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from myrm_tui.agent.read_registry import OFFERED, ReadRegistry
from myrm_tui.agent.tools.base import ToolContext, ToolError

_log = logging.getLogger(__name__)


def refuse_if_changed(path: Path, data: bytes | None, label: str, ctx: ToolContext) -> None:
    """ToolError when the model saw `path` in this session and the file changed since. `data`:
    the file's bytes now, as the tool read them from the handle it will write through (None:
    no file), so the content checked is the content replaced."""
    registry = ReadRegistry(ctx.store, ctx.session_id, ctx.workspace)
    if ctx.store is None or ctx.session_id is None or data is None:
        return  # no session log (a bare tool test): nothing was seen; creating a file is never refused
    if not registry.changed_since_seen(path, data):
        return
    where = ""
    if ctx.vault is not None:
        handle = ctx.vault.put(data)
        try:
            ctx.store.index_artifact(ctx.session_id, handle)
        except Exception:  # noqa: BLE001 - the refusal matters more than the handle being searchable
            _log.warning("could not index %s for search", handle, exc_info=True)
        registry.record(path, data, OFFERED, handle)
        where = f" Its current content is stored as {handle} (file_read it, or file_read {label})."
    raise ToolError(
        f"{label} changed since you last read it (by you or a command): read it again before editing.{where}"
    )


def remember_written(path: Path, content: str, ctx: ToolContext, how: str) -> None:
    """After a successful write the model knows the file: it is what it wrote."""
    ReadRegistry(ctx.store, ctx.session_id, ctx.workspace).record(path, content.encode("utf-8"), how)
