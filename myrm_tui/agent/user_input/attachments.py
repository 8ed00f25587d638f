"""Images the user attaches to a message: checked, capped, and turned into message content.

Why here and not in each front end: the TUI (`@shot.png`, a dropped path, `/image PATH`) and
`myrm run --image` must accept and refuse exactly the same files. A file is taken only when its
first bytes are those of a PNG, JPEG, GIF or WebP image (a renamed text file, a symlink to
/dev/zero or a 2 GB video is refused before it is read whole) and it is at most
`IMAGE_MAX_BYTES`. The content is OpenAI's list form with a base64 data URL; the agent stores it
through `context.media.offload_images`, so the row holds a `vault://` handle, the engine sends
the image to vision models and a placeholder naming the handle to the others (and the turn
tells the user so).

Every attached file, image or text, is read the way file_read reads (agent/tools/files/paths.py, one
no-follow walk): inside the workspace unless `allow_outside_workspace`, never through a symlink.
A repository's `logo.png` that links to a photo in the user's home, or an image path a custom
command names, is refused with the reason instead of being sent to the provider.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:  # the tools import this module's neighbours; the type is only named here
    from myrm_tui.agent.tools.files.paths import FencedPath
    from myrm_tui.settings.sections.output_filters import FilterSpec

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


def read_fenced_attachment(
    ref: str, fenced: FencedPath, limit: int, too_big: Callable[[int], str]
) -> tuple[bytes | None, bool]:
    """(the file's bytes, is a folder) for an attachment, read exactly like file_read reads: a
    no-follow walk from the workspace, a regular file only (a link on the way or as the file, a
    FIFO, a device is refused without blocking), at most `limit` bytes (`too_big(size)` says
    what to do past it). (None, True) for a folder. AttachmentError otherwise."""
    from myrm_tui.agent.tools.base import ToolError
    from myrm_tui.fenced_files import FenceError

    try:
        with fenced.open() as target:
            found = target.lstat()
            if found is None:
                raise AttachmentError(f"cannot attach {ref}: it does not exist.")
            if stat.S_ISDIR(found.st_mode):
                return None, True
            data = target.read_bytes(limit=limit)
    except IsADirectoryError:  # the workspace folder itself
        return None, True
    except (FileNotFoundError, NotADirectoryError):
        raise AttachmentError(f"cannot attach {ref}: it does not exist.") from None
    except (ToolError, FenceError) as exc:
        raise AttachmentError(f"cannot attach {ref}: {exc}") from None
    except OSError as exc:
        raise AttachmentError(f"cannot attach {ref}: {exc.strerror or exc}.") from None
    if len(data) > limit:
        raise AttachmentError(f"cannot attach {ref}: {too_big(len(data))}")
    return data, False


def load_image(
    path: str | Path, base: Path | None = None, *, workspace: Path | None = None, allow_outside: bool = False
) -> ImageAttachment:
    """Read one image file (relative paths from `base`), fenced like file_read: inside
    `workspace` (default: the workspace `base` is in) unless `allow_outside`, and never through a
    symlink. AttachmentError when it is missing, not a regular file, over the cap, or not a
    PNG/JPEG/GIF/WebP by its bytes."""
    from myrm_tui.agent.tools.base import ToolError
    from myrm_tui.agent.tools.files.paths import place
    from myrm_tui.store.workspace import find_workspace_root

    name = str(path)
    target = Path(path).expanduser()
    if not target.is_absolute() and base is not None:
        target = base / target
    root = workspace if workspace is not None else find_workspace_root(base)
    try:
        fenced = place(str(target), root, allow_outside=allow_outside)
    except ToolError as exc:
        raise AttachmentError(f"cannot attach {name}: {exc}") from None
    data, folder = read_fenced_attachment(
        name,
        fenced,
        IMAGE_MAX_BYTES,
        lambda size: f"it is over the {_size(IMAGE_MAX_BYTES)} image limit; shrink or crop it first.",
    )
    if folder or data is None:
        raise AttachmentError(f"cannot attach {name}: it is not a regular file.")
    mime = sniff_image(data[:16])
    if mime is None:
        raise AttachmentError(
            f"cannot attach {name}: it is not a PNG, JPEG, GIF or WebP image (its first bytes say otherwise)."
        )
    return ImageAttachment(name, mime, data)


def check_image_count(count: int) -> None:
    if count > MAX_IMAGES_PER_MESSAGE:
        raise AttachmentError(f"{count} images in one message; at most {MAX_IMAGES_PER_MESSAGE} can be attached.")


def named_outside(path: str | Path) -> bool:
    """The user named a file outside any workspace by its full path (`/image ~/Desktop/x.png`,
    `myrm run --image /tmp/shot.png`): their own choice, typed by them, so it is taken without
    `allow_outside_workspace`. A relative name is always fenced: `logo.png` in a cloned repository
    may be a link to a photo in their home, and a path inside a message may come from a custom
    command the repository wrote."""
    text = str(path).strip()
    return text.startswith(("/", "~"))


def load_images(
    paths: Sequence[str | Path], base: Path | None = None, *, workspace: Path | None = None, allow_outside: bool = False
) -> list[ImageAttachment]:
    check_image_count(len(paths))
    return [load_image(p, base, workspace=workspace, allow_outside=allow_outside) for p in paths]


def message_content(
    text: str, images: Sequence[ImageAttachment], files: Sequence[FileAttachment] = ()
) -> str | list[dict[str, Any]]:
    """What to pass to `Agent.turn`: the text alone, or OpenAI content parts (text first, then
    one part per attached file or folder, then one per image; the turn moves the images to the
    vault and spills big attachments before storing)."""
    if not images and not files:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [attached.part() for attached in files]
    parts += [{"type": "image_url", "image_url": {"url": image.data_url()}} for image in images]
    return parts


def no_vision_notice(model: str, handles: Sequence[str]) -> str:
    """What the user is told when the model cannot see what they attached."""
    named = ", ".join(handles) if handles else "the vault"
    return (
        f"{model} has no vision: the image is stored ({named}) and the model gets a placeholder "
        "naming it instead; switch to a vision model to send the image itself."
    )


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
    named = [
        ref
        for ref in (m["path"].rstrip(_TRAILING) for m in _AT_REF.finditer(text))
        if ref.lower().endswith(IMAGE_SUFFIXES)
    ]
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


# ---------------------------------------------------------------- text files and folders
#
# `@src/app.py` attaches the file as the model would get it from file_read (its header, its
# lines), and `@src/` a listing as glob gives it; both go in the user message as their own text
# part, after what the user typed. Past `tool_output_cap` the message keeps a real excerpt and a
# vault handle to the whole (the agent stores it with the message, indexed in the same
# transaction: `spill_attachments`, called from agent/user_input/user_content.py). Paths are fenced like
# file_read's: outside the workspace only with allow_outside_workspace. An `@word` that names
# no existing file or folder is left as text (a mention, a decorator, an @handle).

# 10 MB: a text file bigger than this is a log or a dump; it would be read whole into memory
# only to keep an excerpt of it; file_read with a range, or grep, is the way in.
TEXT_ATTACH_MAX_BYTES = 10 * 1024 * 1024
# More files than this in one message is a mistaken paste; each one can cost thousands of tokens.
MAX_FILES_PER_MESSAGE = 20
# The opening line of an attachment part: what the transcript shows as a one-line chip and what
# the spill step recognises (the path is JSON-quoted, so no path can end the line early).
_ATTACHED_OPEN = re.compile(r'\A<attached_(?P<kind>file|folder) path=(?P<path>"(?:[^"\\\n]|\\.)*")>\n')


@dataclass(frozen=True)
class FileAttachment:
    name: str  # workspace-relative path (as the model and the user see it)
    kind: str  # "file" or "folder"
    body: str  # what file_read (or glob for a folder) returns for it, whole

    @property
    def text(self) -> str:
        """The message part's text: the body between an opening and a closing tag."""
        return f"<attached_{self.kind} path={json.dumps(self.name)}>\n{self.body}\n</attached_{self.kind}>"

    def part(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


def _expanded(ref: str) -> Path | None:
    """`ref` with a leading `~` / `~user` expanded; None when that home cannot be found (a
    word like `@~draft` in a message: `Path.expanduser` raises for an unknown user)."""
    try:
        return Path(ref).expanduser()
    except RuntimeError:
        return None


def file_refs(text: str, base: Path) -> list[str]:
    """`@path` references to existing files and folders (images excluded: `image_refs` takes them),
    relative to `base`, in order, each once. The text is left as the user wrote it."""
    found = []
    for match in _AT_REF.finditer(text):
        ref = match["path"].rstrip(_TRAILING.replace("/", ""))
        if not ref or ref.lower().endswith(IMAGE_SUFFIXES):
            continue
        target = _expanded(ref)
        if target is None:
            continue
        target = target if target.is_absolute() else base / target
        try:
            exists = target.exists()
        except OSError:
            exists = False
        if exists:
            found.append(ref)
    return list(dict.fromkeys(found))


def _run_to_end(coroutine: Any) -> Any:
    """A file tool's result without an event loop: file_read and glob never wait on anything,
    so their coroutine finishes on the first step (the TUI's key handler and `myrm run` both
    call this outside any running turn)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a file tool waited on I/O; attachments expect it not to")


def load_attachment(ref: str, base: Path, workspace: Path, settings: Any) -> FileAttachment:
    """One `@path`: a text file as file_read shows it, or a folder's listing as glob shows it.
    AttachmentError when it is outside the workspace (unless allowed), binary, or too big."""
    from myrm_tui.agent.tools.base import ToolContext, ToolError
    from myrm_tui.agent.tools.files.paths import display_path, place
    from myrm_tui.agent.tools.search import Glob

    ctx = ToolContext(workspace=Path(workspace).resolve(), settings=settings, vault=None)
    candidate = _expanded(ref)
    if candidate is None:
        raise AttachmentError(f"cannot attach @{ref}: no such user's home folder")
    raw = str(candidate if candidate.is_absolute() else (Path(base) / candidate))
    try:
        fenced = place(raw, ctx.workspace, allow_outside=bool(settings.allow_outside_workspace))
    except ToolError as exc:
        raise AttachmentError(f"cannot attach @{ref}: {exc}") from None
    label = display_path(fenced.path, ctx)
    data, folder = read_fenced_attachment(
        f"@{ref}",
        fenced,
        TEXT_ATTACH_MAX_BYTES,
        lambda size: (
            f"it is over the {_size(TEXT_ATTACH_MAX_BYTES)} attachment limit; ask the model to read "
            "the part you need (file_read with a line range, or grep)."
        ),
    )
    if folder:
        path = fenced.path
        try:
            relative = path.relative_to(ctx.workspace)
        except ValueError:
            raise AttachmentError(f"cannot attach @{ref}: only folders inside the workspace are listed.") from None
        pattern = "**/*" if relative == Path(".") else f"{relative.as_posix()}/**/*"
        try:
            listing = _run_to_end(Glob().run({"pattern": pattern}, ctx)).content
        except ToolError as exc:
            raise AttachmentError(f"cannot attach @{ref}: {exc}") from None
        # Folders end with "/" so the model can tell them from files (glob's lines do not say).
        listing = "\n".join(
            f"{line}/" if not line.startswith(("[", "no files")) and (ctx.workspace / line).is_dir() else line
            for line in listing.splitlines()
        )
        name = "." if relative == Path(".") else f"{relative.as_posix()}/"
        return FileAttachment(name, "folder", f"[{name} · listing]\n{listing}")
    assert data is not None, "a file attachment has its bytes"
    from myrm_tui.agent.tools.files.read import looks_binary
    from myrm_tui.context.recall.select import split_lines

    if looks_binary(data):
        raise AttachmentError(
            f"cannot attach @{ref}: it is a binary file ({len(data):,} bytes); only text "
            "files, folders and PNG/JPEG/GIF/WebP images can be attached."
        )
    text = data.decode("utf-8", errors="replace")
    if not text:
        return FileAttachment(label, "file", f"[{label}: empty file]")
    lines = split_lines(text)
    body = "\n".join(lines)
    return FileAttachment(label, "file", f"[{label} · lines 1-{len(lines)} of {len(lines):,}]\n{body}")


def load_attachments(refs: Sequence[str], base: Path, workspace: Path, settings: Any) -> list[FileAttachment]:
    if len(refs) > MAX_FILES_PER_MESSAGE:
        raise AttachmentError(f"{len(refs)} files in one message; at most {MAX_FILES_PER_MESSAGE} can be attached.")
    return [load_attachment(ref, base, workspace, settings) for ref in refs]


def attachment_of(text: str) -> tuple[str, str] | None:
    """(kind, path) when a message part's text is an attachment, else None."""
    match = _ATTACHED_OPEN.match(text)
    if match is None:
        return None
    try:
        return match["kind"], str(json.loads(match["path"]))
    except ValueError:
        return None


def spill_attachments(
    content: str | list[dict[str, Any]], vault: Any, cap_chars: int, filters: Sequence[FilterSpec] = ()
) -> tuple[str | list[dict[str, Any]], dict[str, str | None]]:
    """Content whose attachment parts fit `cap_chars`: a bigger one keeps a real excerpt (the
    smart filter's, like a big tool output) and the vault handle of the whole, returned with its
    text so the caller indexes it with the message. Without a vault: the excerpt alone."""
    if isinstance(content, str):
        return content, {}
    parts: list[dict[str, Any]] = []
    artifacts: dict[str, str | None] = {}
    for part in content:
        text = part.get("text") if isinstance(part, dict) and part.get("type") == "text" else None
        found = attachment_of(text) if isinstance(text, str) else None
        if found is None or not isinstance(text, str) or len(text) <= cap_chars:
            parts.append(part)
            continue
        kind, path = found
        opening, _, rest = text.partition("\n")
        body = rest.removesuffix(f"\n</attached_{kind}>")
        from myrm_tui.context.rows.ingest import spill_text

        shown, handle = spill_text(
            body,
            tool="file_read" if kind == "file" else "glob",
            arguments={"path": path},
            cap_chars=cap_chars,
            vault=vault,
            filters=filters,
        )
        if handle:
            artifacts[handle] = body
        parts.append({"type": "text", "text": f"{opening}\n{shown}\n</attached_{kind}>"})
    return parts, artifacts


def _short_tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def attachment_label(text: str, model: str = "") -> str | None:
    """The one line the transcript shows for an attachment part ("attached src/app.py, 1.2k
    tokens"), or None when the part is ordinary text."""
    found = attachment_of(text)
    if found is None:
        return None
    kind, path = found
    from myrm_tui.context.window.tokens import count_text_tokens

    tokens = _short_tokens(count_text_tokens(text, model))
    head = text.split("\n", 2)[1] if text.count("\n") >= 1 else ""
    # After a spill the part's second line is the spill marker, not the file_read header.
    excerpt = " (an excerpt; the whole is in the vault)" if head.startswith("[output ") else ""
    what = "the listing of " if kind == "folder" else ""
    return f"attached {what}{path}, {tokens} tokens{excerpt}"


def attachment_chips(files: Sequence[FileAttachment], cap_chars: int, model: str = "") -> list[str]:
    """What the user is shown when the message goes: one line per attachment, counting the
    tokens of what the model will really get (the excerpt when it is spilled)."""
    shown, _ = spill_attachments([f.part() for f in files], None, cap_chars)
    return [attachment_label(str(part.get("text", "")), model) or "" for part in shown if isinstance(part, dict)]
