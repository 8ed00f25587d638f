"""Provider messages (OpenAI chat shape, as litellm sends them) and the one reading of their text.

Why one module at the bottom layer: every layer holds messages (the store keeps them, the context
engine shapes them, providers send them, the TUI shows them), and each used to read "the text of a
message" its own way, so a content-part list could be joined, or an image counted, differently
by search, compaction and display. The TypedDicts name the shape at the boundaries; most code
still passes `dict[str, Any]` because stored messages are whatever a provider returned.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, NotRequired, TypedDict

# What an image part reads as: its base64 is bytes, not text, and a reader (or a search) needs
# only to know one was there.
IMAGE_MARK = "[image]"
# Image part types across providers: OpenAI chat (`image_url`), Anthropic-style (`image`) and the
# OpenAI Responses API (`input_image`).
IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})


class TextPart(TypedDict):
    type: Literal["text"]
    text: str
    # Anthropic prompt caching marker, added by the cache stage just before sending.
    cache_control: NotRequired[dict[str, str]]


class ImageURL(TypedDict):
    url: str
    detail: NotRequired[str]


class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL


ContentPart = TextPart | ImagePart


class FunctionCall(TypedDict):
    name: str
    # A JSON object as text: providers send it as a string, and some send it malformed.
    arguments: str


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[TextPart]


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[ContentPart]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ToolCall]]
    # The model's scratchpad (DeepSeek, some litellm providers): counted in the prompt, never searched.
    reasoning_content: NotRequired[str]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str | list[ContentPart]
    name: NotRequired[str]


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage

PieceKind = Literal["text", "image", "other"]


def content_parts(content: object) -> Iterator[tuple[PieceKind, Any]]:
    """The pieces of a message `content`, classified once for every reader.

    Yields ("text", str) for text, ("image", part) for an image part and ("other", part) for
    anything else in a part list (audio, files, a stray number); the raw part is kept because
    readers treat those differently (a token count prices an unknown part by its JSON, a text
    names it). A content that is neither None, a string nor a list is read as its `str()`.
    """
    if content is None:
        return
    if isinstance(content, str):
        yield "text", content
        return
    if not isinstance(content, list):
        yield "text", str(content)
        return
    for part in content:
        if isinstance(part, str):
            yield "text", part
        elif not isinstance(part, Mapping):
            yield "other", part
        elif part.get("type") == "text":
            text = part.get("text")
            yield "text", text if isinstance(text, str) else ""
        elif part.get("type") in IMAGE_PART_TYPES:
            yield "image", part
        else:
            yield "other", part


def _other_name(part: Any) -> str | None:
    """An unknown part by its type name: it may carry megabytes of base64, never its payload."""
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    return f"[{kind}]" if isinstance(kind, str) and kind else "[part]"


def content_text(content: object, *, sep: str = "\n", image: str | None = IMAGE_MARK, keep_empty: bool = False) -> str:
    """The text of a message `content`: a string, None, or an OpenAI content-part list.

    The defaults are the reading for people and for search: parts one per line, an image as
    "[image]", an unknown part by its type name, empty pieces dropped. The options exist because
    some prompt-path readers must keep their historic output byte for byte (compaction matches
    paths in " "-joined text; the local model sees text parts only): `image=None` drops image
    parts, `keep_empty=True` keeps empty pieces so the joins stay where they were.
    """
    pieces: list[str] = []
    for kind, value in content_parts(content):
        if kind == "text":
            piece: str | None = value
        elif kind == "image":
            piece = image
        else:
            piece = _other_name(value)
        if piece is not None and (piece or keep_empty):
            pieces.append(piece)
    return sep.join(pieces)
