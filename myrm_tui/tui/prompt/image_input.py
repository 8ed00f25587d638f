"""Images the chat screen sends with the next message (pure: no Textual).

Two ways in: `/image PATH` queues a file for the next message, and the message itself may name
images (`@shot.png`, or a path a terminal pasted for a dropped file). Both go through
`agent.attachments`, so the TUI refuses exactly what `myrm run --image` refuses. A refused file
stops the send with the reason, and the draft stays in the prompt: nothing is lost.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.agent.user_input.attachments import (
    MAX_IMAGES_PER_MESSAGE,
    AttachmentError,
    ImageAttachment,
    image_refs,
    load_image,
)


def describe(image: ImageAttachment) -> str:
    size = len(image.data)
    shown = f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{max(1, size // 1024)} KB"
    return f"{image.name} ({image.mime.split('/')[-1].upper()}, {shown})"


class PendingImages:
    """The images queued with `/image` for the next message."""

    def __init__(self) -> None:
        self.queued: list[ImageAttachment] = []
        self.in_flight: list[ImageAttachment] = []

    def add(self, path: str, base: Path, *, allow_outside: bool = False) -> ImageAttachment:
        path = path.strip()
        if not path:
            raise AttachmentError("/image needs a path: /image screenshot.png")
        if len(self.queued) >= MAX_IMAGES_PER_MESSAGE:
            raise AttachmentError(f"at most {MAX_IMAGES_PER_MESSAGE} images can go with one message.")
        image = load_image(_unquote(path), base, workspace=base, allow_outside=allow_outside)
        self.queued.append(image)
        return image

    def for_message(self, text: str, base: Path, *, allow_outside: bool = False) -> list[ImageAttachment]:
        """The queued images plus those the text names; AttachmentError for the first bad one
        (the queue is kept: the caller clears it once the message is really sent)."""
        named = [load_image(ref, base, workspace=base, allow_outside=allow_outside) for ref in image_refs(text, base)]
        images = [*self.queued, *named]
        if len(images) > MAX_IMAGES_PER_MESSAGE:
            raise AttachmentError(f"{len(images)} images in one message; at most {MAX_IMAGES_PER_MESSAGE}.")
        return images

    def commit(self) -> None:
        """The message went out: the queue is in flight (given back if the turn fails)."""
        self.in_flight, self.queued = self.queued, []

    def give_back(self) -> None:
        """A turn that failed returns its queued images for the resend (images the text names
        come back with the restored draft)."""
        self.queued, self.in_flight = [*self.in_flight, *self.queued], []


def _unquote(path: str) -> str:
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "'\"":
        return path[1:-1]
    return path.replace("\\ ", " ")
