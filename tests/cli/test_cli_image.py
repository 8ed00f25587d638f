"""`myrm run --image` and `@name.png` in the prompt: the real entry point in a subprocess, the
scripted provider recording what it received."""

from __future__ import annotations

import base64
import json
import struct
import zlib

from myrm_tui.store import Store


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def sent_user(record) -> dict:
    request = json.loads(record.read_text().splitlines()[-1])
    return [m for m in request if m["role"] == "user"][-1]


def test_run_with_image_reaches_a_vision_model(myrm, script, tmp_path):
    image = png()
    (myrm.workspace / "shot.png").write_bytes(image)
    record = tmp_path / "requests.jsonl"
    model = script({"text": "a red dot"}, supports_vision=True, record=str(record))
    result = myrm("run", "--model", model, "--image", "shot.png", "what is this?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "a red dot"
    parts = sent_user(record)["content"]
    assert parts[0] == {"type": "text", "text": "what is this?"}
    assert base64.b64decode(parts[1]["image_url"]["url"].split(",", 1)[1]) == image


def test_at_reference_to_a_non_vision_model_sends_a_placeholder_and_says_so(myrm, script, tmp_path):
    (myrm.workspace / "shot.png").write_bytes(png())
    record = tmp_path / "requests.jsonl"
    model = script({"text": "no eyes"}, record=str(record))
    result = myrm("run", "--model", model, "describe @shot.png")
    assert result.returncode == 0, result.stderr
    sent = sent_user(record)["content"]
    assert not any(p.get("type") == "image_url" for p in sent)
    text = " ".join(p.get("text", "") for p in sent)
    assert "image omitted (model has no vision): vault://" in text
    assert "has no vision" in result.stderr and "vault://" in result.stderr


def test_a_file_that_is_not_an_image_is_refused_before_anything_is_stored(myrm, script, tmp_path):
    (myrm.workspace / "notes.png").write_text("plain text\n")
    model = script({"text": "never"})
    result = myrm("run", "--model", model, "--image", "notes.png", "look")
    assert result.returncode == 2
    assert "cannot attach notes.png" in result.stderr and "not a PNG, JPEG, GIF or WebP" in result.stderr
    assert not (myrm.workspace / ".myrm" / "sessions.db").exists() or not _sessions(myrm.workspace)
    missing = myrm("run", "--model", model, "--json", "look at @gone.png")
    assert missing.returncode == 2
    assert "gone.png" in json.loads(missing.stdout)["error"]["message"]


def _sessions(workspace) -> list:
    with Store.open(workspace) as store:
        return store.list_sessions()


def test_a_full_path_the_user_gives_with_image_is_taken_but_a_relative_link_out_is_not(myrm, script, tmp_path):
    """`--image /path` is the user's own choice (a screenshot on their desktop); `shot.png` in the
    repository that links out of it is not (a cloned repository may point it at their photos)."""
    outside = tmp_path / "Desktop" / "shot.png"
    outside.parent.mkdir()
    outside.write_bytes(png())
    (myrm.workspace / "logo.png").symlink_to(outside)
    model = script({"text": "seen"}, supports_vision=True)
    taken = myrm("run", "--model", model, "--image", str(outside), "what is this?")
    assert taken.returncode == 0 and taken.stdout.strip() == "seen", taken.stderr
    refused = myrm("run", "--model", model, "--image", "logo.png", "what is this?")
    assert refused.returncode != 0 and "outside the workspace" in refused.stderr, refused.stderr
