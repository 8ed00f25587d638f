"""Images the user attaches to a message: checked, capped, and turned into message content.

Why here and not in each front end: the TUI (`@shot.png`, a dropped path, `/image PATH`) and
`myrm run --image` must accept and refuse exactly the same files. A file is taken only when its
first bytes are those of a PNG, JPEG, GIF or WebP image (a renamed text file, a symlink to
/dev/zero or a 2 GB video is refused before it is read whole) and it is at most
`IMAGE_MAX_BYTES`. The content is OpenAI's list form with a base64 data URL; the agent stores it
through `context.media.offload_images`, so the row holds a `vault://` handle, the engine sends
the image to vision models and a placeholder naming the handle to the others (and the turn
tells the user so).
"""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

# 5 MB: the strictest per-image limit among the large vision providers (Anthropic's API refuses
# bigger images; OpenAI and Gemini take more), so an accepted image is accepted everywhere.
IMAGE_MAX_BYTES = 5 * 1024 * 1024
# More images than this in one message is almost always a mistaken glob or paste; each costs
# the provider hundreds to thousands of tokens.
MAX_IMAGES_PER_MESSAGE = 8
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
# `@path` in a prompt (the TUI completes workspace paths after `@`); the path ends at whitespace.
_AT_REF = re.compile(r"(?<![\w@])@(?P<path>[^\s@]+)")
_TRAILING = ".,;:!?)]}'\""


class AttachmentError(ValueError):
    """A file that cannot be attached; the message says which and why, and what to do."""


@dataclass(frozen=True)
class ImageAttachment:
    name: str  # as the user named it (shown back to them)
    mime: str
    data: bytes

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def sniff_image(head: bytes) -> str | None:
    """The MIME type the file's first bytes prove, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


def load_image(path: str | Path, base: Path | None = None) -> ImageAttachment:
    """Read one image file (relative paths from `base`). AttachmentError when it is missing, not a
    regular file, over the cap, or not a PNG/JPEG/GIF/WebP by its bytes."""
    name = str(path)
    target = Path(path).expanduser()
    if not target.is_absolute() and base is not None:
        target = base / target
    try:
        if not target.is_file():
            what = "does not exist" if not target.exists() else "is not a regular file"
            raise AttachmentError(f"cannot attach {name}: it {what}.")
        size = target.stat().st_size
        if size > IMAGE_MAX_BYTES:
            raise AttachmentError(f"cannot attach {name}: it is {_size(size)}, over the {_size(IMAGE_MAX_BYTES)} "
                                  "image limit; shrink or crop it first.")
        with target.open("rb") as handle:
            data = handle.read(IMAGE_MAX_BYTES + 1)
    except OSError as exc:
        raise AttachmentError(f"cannot attach {name}: {exc.strerror or exc}.") from None
    if len(data) > IMAGE_MAX_BYTES:  # grew while we looked
        raise AttachmentError(f"cannot attach {name}: over the {_size(IMAGE_MAX_BYTES)} image limit.")
    mime = sniff_image(data[:16])
    if mime is None:
        raise AttachmentError(f"cannot attach {name}: it is not a PNG, JPEG, GIF or WebP image "
                              "(its first bytes say otherwise).")
    return ImageAttachment(name, mime, data)


def load_images(paths: Sequence[str | Path], base: Path | None = None) -> list[ImageAttachment]:
    if len(paths) > MAX_IMAGES_PER_MESSAGE:
        raise AttachmentError(f"{len(paths)} images in one message; at most {MAX_IMAGES_PER_MESSAGE} can be attached.")
    return [load_image(p, base) for p in paths]


def message_content(text: str, images: Sequence[ImageAttachment]) -> str | list[dict[str, Any]]:
    """What to pass to `Agent.turn`: the text alone, or OpenAI content parts (text first, then
    one part per image; the turn moves the images to the vault before storing)."""
    if not images:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "image_url", "image_url": {"url": image.data_url()}} for image in images]
    return parts


def no_vision_notice(model: str, handles: Sequence[str]) -> str:
    """What the user is told when the model cannot see what they attached."""
    named = ", ".join(handles) if handles else "the vault"
    return (f"{model} has no vision: the image is stored ({named}) and the model gets a placeholder "
            "naming it instead; switch to a vision model to send the image itself.")


def _as_path(token: str) -> str | None:
    """A token as a file path: `file://` URIs decoded, surrounding quotes dropped."""
    if token.startswith("file://"):
        return unquote(urlparse(token).path)
    return token


def image_refs(text: str, base: Path) -> list[str]:
    """Image files the prompt points at: `@name.png` references (always), and whole-token paths
    with an image suffix that exist (what a terminal pastes for a dropped file: absolute, quoted,
    backslash-escaped or a file:// URI). The text is left as the user wrote it."""
    # Sentence punctuation after a reference is not part of it ("what is in @shot.png?").
    named = [ref for ref in (m["path"].rstrip(_TRAILING) for m in _AT_REF.finditer(text))
             if ref.lower().endswith(IMAGE_SUFFIXES)]
    found: list[str] = []
    try:
        tokens = shlex.split(text, posix=True)
    except ValueError:  # an unbalanced quote: no dropped paths to find
        tokens = []
    for token in tokens:
        path = _as_path(token)
        if path and (path.startswith(("/", "~", "./")) or token.startswith("file://")):
            found.append(path)
    dropped = []
    for ref in found:
        target = Path(ref).expanduser()
        if ref.lower().endswith(IMAGE_SUFFIXES) and (target if target.is_absolute() else base / target).is_file():
            dropped.append(ref)
    # An `@name.png` is always meant as an attachment: a missing one is reported, not ignored.
    return list(dict.fromkeys([*named, *dropped]))
