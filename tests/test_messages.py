"""`messages.content_text`: the one reading of a message's text, and the options that keep the
prompt-path readers (compaction, the local model, token counts) byte-identical to what they were."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.window.tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    count_message_tokens,
    count_text_tokens,
)
from myrm_tui.llm.local.provider import plain_messages
from myrm_tui.messages import IMAGE_MARK, ImagePart, UserMessage, content_parts, content_text

IMAGE: ImagePart = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"}}


def test_plain_and_empty_contents():
    assert content_text(None) == ""
    assert content_text("") == ""
    assert content_text("hello\nworld") == "hello\nworld"
    assert content_text([]) == ""


def test_parts_one_per_line_and_images_as_a_mark():
    content = [{"type": "text", "text": "look at this"}, IMAGE, {"type": "text", "text": "and this"}]
    assert content_text(content) == f"look at this\n{IMAGE_MARK}\nand this"


def test_every_image_kind_reads_as_the_mark_never_its_bytes():
    for kind in ("image_url", "image", "input_image"):
        assert content_text([{"type": kind, "data": "QUJD" * 1000}]) == IMAGE_MARK


def test_unknown_parts_are_named_not_dumped():
    audio = {"type": "input_audio", "input_audio": {"data": "UklGR" * 1000}}
    assert content_text([audio, {"no": "type"}]) == "[input_audio]\n[part]"


def test_bare_strings_count_and_stray_values_do_not():
    assert content_text(["a", 3, None, {"type": "text", "text": "b"}]) == "a\nb"


def test_a_non_string_text_is_empty_and_an_odd_content_is_its_str():
    assert content_text([{"type": "text", "text": None}, {"type": "text"}]) == ""
    assert content_text(42) == "42"


def test_options_separator_image_and_empty_pieces():
    content = [{"type": "text", "text": "a"}, IMAGE, {"type": "text", "text": ""}, {"type": "text", "text": "b"}]
    assert content_text(content) == "a\n[image]\nb"
    assert content_text(content, sep=" ") == "a [image] b"
    assert content_text(content, image=None) == "a\nb"
    assert content_text(content, image=None, keep_empty=True) == "a\n\nb"
    assert content_text(content, sep=" ", image="", keep_empty=True) == "a   b"


def test_content_parts_classifies_each_piece():
    odd = {"type": "file", "file": {}}
    assert list(content_parts(["x", {"type": "text", "text": "y"}, IMAGE, odd, 7])) == [
        ("text", "x"),
        ("text", "y"),
        ("image", IMAGE),
        ("other", odd),
        ("other", 7),
    ]
    assert list(content_parts(None)) == []


def test_typed_messages_flow_into_the_readers():
    message: UserMessage = {"role": "user", "content": [{"type": "text", "text": "src/app.py"}, IMAGE]}
    assert compaction_text(message) == "src/app.py "
    assert count_message_tokens(message) == MESSAGE_OVERHEAD_TOKENS + count_text_tokens("src/app.py") + IMAGE_TOKENS
    assert plain_messages([message]) == [{"role": "user", "content": "src/app.py"}]


# The readings the prompt path had before there was one function, kept here as the oracle: on
# the contents the app produces (strings, None, text and image_url parts) they must not move.
def _old_intent_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _old_local_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def _old_token_pieces(content: Any) -> list[tuple[str, str]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [("text", content)]
    return [("image", "") if p.get("type") == "image_url" else ("text", str(p.get("text", ""))) for p in content]


_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
_part = st.one_of(st.builds(lambda t: {"type": "text", "text": t}, _text), st.just(IMAGE))
app_contents = st.one_of(st.none(), _text, st.lists(_part, max_size=6))


@given(app_contents)
def test_compaction_and_local_readings_are_unchanged(content):
    assert compaction_text({"content": content}) == _old_intent_text(content)
    assert content_text(content, image=None, keep_empty=True) == _old_local_text(content)


@given(app_contents)
def test_token_pieces_are_unchanged(content):
    pieces = [("image", "") if kind == "image" else ("text", value) for kind, value in content_parts(content)]
    assert pieces == _old_token_pieces(content)


@given(app_contents)
def test_the_default_reading_keeps_every_text_in_order_and_no_image_bytes(content):
    text = content_text(content)
    texts = [content] if isinstance(content, str) else [p["text"] for p in content or [] if p.get("type") == "text"]
    assert "iVBORw0KGgo" not in text or any("iVBORw0KGgo" in piece for piece in texts)
    position = 0
    for piece in texts:
        position = text.index(piece, position) + len(piece)
