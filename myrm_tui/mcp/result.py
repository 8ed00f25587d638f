"""An MCP tool result as the text a tool result is in myrm: what the model reads, what is stored.

Why text: every other tool's result is text, and the engine's machinery (spill to the vault with
an excerpt and a handle, the search index, masking, summaries) works on text. So text blocks are
kept as they are; structured content is added as JSON when the text does not already say it;
images, audio and binary resources go to the vault and the text names their handle (the model can
ask for them with ctx_expand; the bytes never bloat a row); a resource link is listed with the
call that reads it (`mcp_read_resource`). Large results are spilled by the agent like any output.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import mimetypes
from dataclasses import dataclass
from typing import Any

_log = logging.getLogger(__name__)

READ_RESOURCE_TOOL = "mcp_read_resource"
EMPTY_RESULT = "(the tool returned no content)"


@dataclass(frozen=True)
class RenderedResult:
    text: str
    is_error: bool


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 10_000 else f"{count / 1024:,.0f} KB"


def _binary(data_b64: str, mime: str, what: str, ctx: Any) -> str:
    """Store base64 bytes in the vault; the line that stands for them in the text."""
    try:
        data = base64.b64decode(data_b64, validate=False)
    except (binascii.Error, ValueError):
        return f"[{what} {mime}: the server sent data that is not valid base64; dropped]"
    vault = getattr(ctx, "vault", None)
    if vault is None:
        return f"[{what} {mime}, {_size(len(data))}: not kept (no vault in this context)]"
    handle = vault.put(data, suffix=mimetypes.guess_extension(mime or "") or ".bin")
    store, session = getattr(ctx, "store", None), getattr(ctx, "session_id", None)
    if store is not None and session:
        try:
            store.index_artifact(session, handle)  # catalogued for this session (binary: not searched)
        except Exception:  # noqa: BLE001 - the bytes are in the vault and the handle in the text
            _log.warning("could not catalogue %s for the session", handle, exc_info=True)
    return f"[{what} {mime}, {_size(len(data))}: stored as {handle}]"


def _resource_line(server: str, uri: str, name: str = "", mime: str = "") -> str:
    label = f"{name} " if name and name != uri else ""
    kind = f" ({mime})" if mime else ""
    return (
        f"[resource link: {label}{uri}{kind} — read it with {READ_RESOURCE_TOOL}"
        f"(server={json.dumps(server)}, uri={json.dumps(uri)})]"
    )


def _structured_is_said(structured: Any, texts: list[str]) -> bool:
    """True when a text block already carries the structured value (SDK servers send both: the
    JSON text, or for a plain return value the text itself wrapped as {"result": text})."""
    if isinstance(structured, dict) and set(structured) == {"result"}:
        inner = structured["result"]
        if any(text == (inner if isinstance(inner, str) else json.dumps(inner)) for text in texts):
            return True
    for text in texts:
        try:
            if json.loads(text) in (structured, structured.get("result") if isinstance(structured, dict) else None):
                return True
        except (json.JSONDecodeError, TypeError):
            continue
    return False


def render_blocks(blocks: list[Any], server: str, ctx: Any) -> list[str]:
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(_binary(block.data, block.mime_type, kind, ctx))
        elif kind == "resource_link":
            parts.append(_resource_line(server, str(block.uri), block.name or "", block.mime_type or ""))
        elif kind == "resource":
            resource = block.resource
            uri, mime = str(resource.uri), resource.mime_type or ""
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"[resource {uri}{f' ({mime})' if mime else ''}]\n{text}")
            else:
                parts.append(f"[resource {uri}] " + _binary(getattr(resource, "blob", ""), mime, "resource", ctx))
        else:
            parts.append(f"[content of type {kind!r} that myrm does not show]")
    return parts


def render_result(result: Any, server: str, ctx: Any) -> RenderedResult:
    blocks = list(result.content or [])
    parts = render_blocks(blocks, server, ctx)
    structured = result.structured_content
    texts = [b.text for b in blocks if getattr(b, "type", "") == "text"]
    if structured is not None and not _structured_is_said(structured, texts):
        parts.append("structured content:\n" + json.dumps(structured, ensure_ascii=False, indent=1, default=str))
    text = "\n".join(parts) if parts else EMPTY_RESULT
    return RenderedResult(text, bool(result.is_error))


def render_resource(result: Any, server: str, ctx: Any) -> str:
    """`resources/read` contents (text kept, binary vaulted), one block per content item."""
    parts = []
    for item in result.contents or []:
        uri, mime = str(item.uri), item.mime_type or ""
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(text if len(result.contents) == 1 else f"[{uri}]\n{text}")
        else:
            parts.append(f"[{uri}] " + _binary(getattr(item, "blob", ""), mime, "resource", ctx))
    return "\n".join(parts) if parts else EMPTY_RESULT
