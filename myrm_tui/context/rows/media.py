"""Images live in the vault, not in database rows; the prompt refers to them by handle.

Why: a base64 screenshot is ~100 KB of row per image; storing it once by content hash keeps
the log small and lets every later stage count an image as a flat token cost instead of
tokenising its bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from myrm_tui.store.vault import Vault

_DATA_URL = re.compile(r"data:(?P<mime>image/[A-Za-z0-9.+-]+);base64,(?P<data>.*)", re.DOTALL)
_SUFFIX_BY_MIME = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/jpg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}
MIME_BY_SUFFIX = {v: k for k, v in _SUFFIX_BY_MIME.items() if k != "image/jpg"}


def image_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]


def image_url_of(part: dict[str, Any]) -> str:
    image = part.get("image_url")
    return str(image.get("url", "")) if isinstance(image, dict) else str(image or "")


def has_media(message: dict[str, Any]) -> bool:
    return bool(image_parts(message))


def offload_images(message: dict[str, Any], vault: Vault) -> dict[str, Any]:
    """A copy of `message` whose base64 images are stored in the vault and referenced by handle.
    Non-data URLs (http, file) are left as they are; malformed base64 is kept inline."""
    if not image_parts(message):
        return message
    parts = []
    for part in message["content"]:
        if isinstance(part, dict) and part.get("type") == "image_url":
            match = _DATA_URL.fullmatch(image_url_of(part))
            if match:
                try:
                    data = base64.b64decode(match["data"], validate=False)
                except (binascii.Error, ValueError):
                    data = b""
                if data:
                    handle = vault.put(data, suffix=_SUFFIX_BY_MIME.get(match["mime"].lower(), ".bin"))
                    image = dict(part.get("image_url") or {})
                    image["url"] = handle
                    part = {"type": "image_url", "image_url": image}
        parts.append(part)
    out = dict(message)
    out["content"] = parts
    return out
