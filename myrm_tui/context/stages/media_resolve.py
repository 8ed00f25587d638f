"""Stage 11, media resolve: vault image handles back to base64 data URLs for the provider.

Resolved URLs are memoised per handle (content-addressed, so they never go stale); the prompt
therefore carries byte-identical image parts on every turn.
"""

from __future__ import annotations

import base64
from typing import Any

from myrm_tui.context.rows.media import MIME_BY_SUFFIX, image_url_of
from myrm_tui.store.vault import Vault, VaultError


class MediaResolver:
    def __init__(self, vault: Vault | None):
        self.vault = vault
        self._cache: dict[str, str] = {}
        # Handles found missing so far: a resolved message is kept for later requests only when
        # resolving it found none missing (`RenderedHistory.outgoing`), as a missing image is
        # looked up again on every request (the vault may have it by then).
        self.missing = 0

    def data_url(self, handle: str) -> str | None:
        if handle in self._cache:
            return self._cache[handle]
        if self.vault is None:
            return None
        try:
            path = self.vault.path_of(handle)
            data = self.vault.read_bytes(handle)
        except VaultError:
            return None
        mime = MIME_BY_SUFFIX.get(path.suffix.lower(), "image/png")
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        self._cache[handle] = url
        return url

    def resolve(self, message: dict[str, Any]) -> dict[str, Any]:
        content = message.get("content")
        if not isinstance(content, list):
            return message
        changed = False
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = image_url_of(part)
                if url.startswith("vault://"):
                    resolved = self.data_url(url)
                    if resolved is None:
                        self.missing += 1
                        part = {"type": "text", "text": f"[image {url} is missing from the vault]"}
                    else:
                        image = dict(part.get("image_url") or {})
                        image["url"] = resolved
                        part = {"type": "image_url", "image_url": image}
                    changed = True
            parts.append(part)
        if not changed:
            return message
        out = dict(message)
        out["content"] = parts
        return out
