"""Stage 2, media filter: a sliding visual window over the newest media-bearing messages.

Why: screenshots pile up in agent loops and each costs the provider hundreds of tokens; only
the latest ones matter for visual reasoning. Older images become a text placeholder naming
their vault handle, and a model without vision gets none at all.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.rows.media import image_url_of


def strip_media(message: dict[str, Any], why: str) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            url = image_url_of(part)
            ref = url if url.startswith("vault://") else "an earlier message"
            recover = f' · file_read("{url}")' if url.startswith("vault://") else ""
            parts.append({"type": "text", "text": f"[image omitted ({why}): {ref}{recover}]"})
        else:
            parts.append(part)
    out = dict(message)
    out["content"] = parts
    return out
