"""A user message's content as it is stored: text, or list content with its images in the vault.

Why here and not in the TUI: `Agent.turn` takes either, and `myrm replay` feeds recorded user
messages (OpenAI list content with `image_url` parts) through the same turn as a typed message.
A base64 image is never stored in a row: it goes to the vault, and the row names its handle;
the handle is catalogued with the message (binary, so not full-text indexed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from myrm_tui.context.rows.media import image_parts, image_url_of, offload_images
from myrm_tui.store.vault import Vault

if TYPE_CHECKING:
    from myrm_tui.settings.sections.output_filters import FilterSpec


def user_content(
    content: str | list[dict[str, Any]],
    vault: Vault | None,
    cap_chars: int | None = None,
    filters: Sequence[FilterSpec] = (),
) -> tuple[str | list[dict[str, Any]], dict[str, str | None]]:
    """(content to store, vault handles it names → their text, or None to read the vault). Text
    passes through unchanged; an attached file above `cap_chars` keeps an excerpt and the handle
    of the whole (agent/user_input/attachments.py: `@file`), cut by the session's `filters` too."""
    if isinstance(content, str) or vault is None:
        return content, {}
    stored = offload_images({"role": "user", "content": list(content)}, vault)
    handles: dict[str, str | None] = {
        url: None for url in map(image_url_of, image_parts(stored)) if url.startswith(vault.HANDLE_PREFIX)
    }
    parts = stored["content"]
    if cap_chars is not None:
        from myrm_tui.agent.user_input.attachments import spill_attachments

        parts, spilled = spill_attachments(parts, vault, cap_chars, filters)
        handles.update(spilled)
    return parts, handles


def text_of_parts(content: str | list[dict[str, Any]]) -> str:
    """The text a person typed: the text parts of list content, joined (attached files and the
    undo note are not typed text: they are left out)."""
    if isinstance(content, str):
        return content
    from myrm_tui.agent.user_input.attachments import attachment_of
    from myrm_tui.context.undo_note import is_note_part

    return "\n".join(
        str(p.get("text", ""))
        for p in content
        if isinstance(p, dict)
        and p.get("type") == "text"
        and attachment_of(str(p.get("text", ""))) is None
        and not is_note_part(p)
    )
