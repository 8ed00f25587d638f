"""Images from the user, live through the scripted provider.

The script records every request the provider received (after litellm), so the tests see what
a real model would get: an image part for a vision model, a placeholder naming the vault
handle for the others. Files are real PNGs written here; refusals are checked on real files.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import Notice, UserMessageStored
from myrm_tui.agent.user_input.attachments import (
    IMAGE_MAX_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    AttachmentError,
    image_refs,
    load_image,
    load_images,
    message_content,
    sniff_image,
)
from tests.agent.agent_helpers import drive, settings_for


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """A real, decodable PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def scripted(tmp_path: Path, *turns: dict, vision: bool) -> tuple[str, Path]:
    record = tmp_path / f"requests-{vision}.jsonl"
    path = tmp_path / f"script-{vision}.json"
    path.write_text(json.dumps({"turns": list(turns), "supports_vision": vision, "record": record.name}))
    return f"scripted/{path}", record


def requests(record: Path) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def last_user(request: list[dict]) -> dict:
    return [m for m in request if m["role"] == "user"][-1]


def agent_for(store, workspace, model) -> Agent:
    session = store.create_session(model=model)
    return Agent(store=store, session_id=session.id, settings=settings_for(model), workspace=workspace)


async def test_a_vision_model_receives_the_image_as_an_image_part(store, workspace, tmp_path):
    image = png(3, 2, (10, 200, 30))
    (workspace / "shot.png").write_bytes(image)
    model, record = scripted(tmp_path, {"text": "a green rectangle"}, vision=True)
    agent = agent_for(store, workspace, model)
    content = message_content(
        "what is in @shot.png?", load_images(image_refs("what is in @shot.png?", workspace), workspace)
    )
    log = await drive(agent, content)
    assert not [n for n in log.of(Notice) if "vision" in n.text]
    [stored_event] = log.of(UserMessageStored)
    assert stored_event.text == "what is in @shot.png?"
    # what the provider got: the text, then the image whose bytes are exactly the file's
    parts = last_user(requests(record)[-1])["content"]
    assert parts[0] == {"type": "text", "text": "what is in @shot.png?"}
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",", 1)[1]) == image
    # what the store holds: a vault handle, not 100 KB of base64 in a row
    [row] = [r for r in store.messages(agent.session_id) if r.role == "user"]
    handle = row.message["content"][1]["image_url"]["url"]
    assert handle.startswith("vault://") and store.vault.read_bytes(handle) == image
    assert "base64" not in json.dumps(row.message)


async def test_a_model_without_vision_gets_a_placeholder_with_the_handle_and_the_user_is_told(
    store, workspace, tmp_path
):
    (workspace / "shot.png").write_bytes(png())
    model, record = scripted(tmp_path, {"text": "I cannot see it"}, vision=False)
    agent = agent_for(store, workspace, model)
    log = await drive(agent, message_content("look", [load_image("shot.png", workspace)]))
    [row] = [r for r in store.messages(agent.session_id) if r.role == "user"]
    handle = row.message["content"][1]["image_url"]["url"]
    sent = last_user(requests(record)[-1])["content"]
    assert all(p.get("type") != "image_url" for p in sent), "no image part reaches a model without vision"
    placeholder = " ".join(p["text"] for p in sent if p.get("type") == "text")
    assert "image omitted (model has no vision)" in placeholder and handle in placeholder
    assert "base64" not in json.dumps(sent)
    [notice] = [n for n in log.of(Notice) if "no vision" in n.text]
    assert handle in notice.text and notice.level == "warning"


async def test_resending_the_same_image_after_a_failure_reuses_the_stored_message(store, workspace, tmp_path):
    (workspace / "shot.png").write_bytes(png())
    model, record = scripted(tmp_path, {"error": "auth", "error_times": 1}, {"text": "now I see it"}, vision=True)
    agent = agent_for(store, workspace, model)
    content = message_content("look", [load_image("shot.png", workspace)])
    await drive(agent, content)
    log = await drive(agent, message_content("look", [load_image("shot.png", workspace)]))
    [event] = log.of(UserMessageStored)
    assert event.reused
    assert [r.role for r in store.messages(agent.session_id)] == ["user", "assistant"]
    assert sum(p.get("type") == "image_url" for p in last_user(requests(record)[-1])["content"]) == 1


async def test_plain_text_turns_are_unchanged(store, workspace, tmp_path):
    model, record = scripted(tmp_path, {"text": "hi"}, vision=True)
    agent = agent_for(store, workspace, model)
    await drive(agent, "hello")
    assert last_user(requests(record)[-1])["content"] == "hello"


# ------------------------------------------------------------------ what is refused, and why


def test_only_real_images_under_the_cap_are_accepted(tmp_path):
    (tmp_path / "notes.png").write_text("this is text pretending to be a png\n")
    with pytest.raises(AttachmentError, match="not a PNG, JPEG, GIF or WebP"):
        load_image("notes.png", tmp_path)
    with pytest.raises(AttachmentError, match="does not exist"):
        load_image("missing.png", tmp_path)
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(AttachmentError, match="not a regular file"):
        load_image("dir.png", tmp_path)
    os.symlink("/dev/zero", tmp_path / "zero.png")
    with pytest.raises(AttachmentError, match="zero.png is a symbolic link, or passes through one, to /dev/zero"):
        load_image("zero.png", tmp_path)
    big = tmp_path / "big.png"
    with big.open("wb") as handle:  # a real PNG header, then past the cap (sparse: costs no disk)
        handle.write(png())
        handle.truncate(IMAGE_MAX_BYTES + 1)
    with pytest.raises(AttachmentError, match="over the 5.0 MB image limit"):
        load_image(big, tmp_path)
    at_cap = tmp_path / "at-cap.png"
    with at_cap.open("wb") as handle:
        handle.write(png())
        handle.truncate(IMAGE_MAX_BYTES)
    assert load_image(at_cap, workspace=tmp_path).mime == "image/png"
    (tmp_path / "ok.png").write_bytes(png())
    with pytest.raises(AttachmentError, match=f"at most {MAX_IMAGES_PER_MESSAGE}"):
        load_images(["ok.png"] * (MAX_IMAGES_PER_MESSAGE + 1), tmp_path)


@pytest.mark.parametrize(
    "head, mime",
    [
        (b"\x89PNG\r\n\x1a\n....", "image/png"),
        (b"\xff\xd8\xff\xe0..JFIF", "image/jpeg"),
        (b"GIF89a......", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x00\x00\x00\x00WAVEfmt ", None),
        (b"<svg xmlns=", None),
        (b"%PDF-1.7", None),
        (b"", None),
    ],
)
def test_the_bytes_decide_the_type_not_the_name(head, mime):
    assert sniff_image(head) == mime


def test_image_references_in_a_prompt(tmp_path):
    (tmp_path / "shot.png").write_bytes(png())
    (tmp_path / "with space").mkdir()
    (tmp_path / "with space" / "drop.jpg").write_bytes(b"\xff\xd8\xff\xe0")
    dropped = str(tmp_path / "with space" / "drop.jpg")
    assert image_refs("what is @shot.png", tmp_path) == ["shot.png"]
    assert image_refs("what is in @shot.png? and (@shot.png)", tmp_path) == ["shot.png"]
    assert image_refs("see @src/main.py and email me@example.com", tmp_path) == []
    assert image_refs("see @missing.png", tmp_path) == ["missing.png"], "a named image that is missing is reported"
    assert image_refs(f"'{dropped}' what is this", tmp_path) == [dropped]
    assert image_refs(dropped.replace(" ", "\\ ") + " explain", tmp_path) == [dropped]
    assert image_refs("file://" + dropped.replace(" ", "%20"), tmp_path) == [dropped]
    assert image_refs("the file /etc/hostname and /nope/x.png", tmp_path) == []
