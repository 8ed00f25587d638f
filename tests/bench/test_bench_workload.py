"""The synthetic workload: deterministic, provider-valid, and carrying every needle where it says."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections import Counter

import pytest

from bench.needles import PROBE_LAGS, needle_pattern
from bench.sessionio import answers_path_for, read_answers, read_session, session_bytes, session_problems
from bench.workload import BIG_LOG_CHARS, SCREENSHOT_EVERY, STORM_WIDTH, generate, main


@pytest.fixture(scope="module")
def coding400():
    return generate("coding", 400, 1)


def _turns(lines):
    return {line["turn"]: line["messages"] for line in lines if "turn" in line and "messages" in line}


def _text(message) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def _png_ok(data: bytes) -> bool:
    """Decode chunk by chunk: signature, CRCs, and IDAT inflating to exactly the declared pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width is not None and len(zlib.decompress(idat)) == height * (width * 3 + 1)


def test_same_seed_gives_identical_bytes_and_another_seed_differs():
    first, answers = generate("coding", 60, 7)
    second, answers_again = generate("coding", 60, 7)
    assert session_bytes(first) == session_bytes(second)
    assert answers == answers_again
    assert session_bytes(generate("coding", 60, 8)[0]) != session_bytes(first)
    assert session_bytes(generate("tool-storm", 60, 7)[0]) == session_bytes(generate("tool-storm", 60, 7)[0])


def test_cli_writes_session_and_answers_sidecar(tmp_path, capsys):
    out = tmp_path / "chatty.jsonl"
    assert main(["--kind", "chatty", "--turns", "60", "--seed", "3", "--out", str(out)]) == 0
    lines, answers = generate("chatty", 60, 3)
    assert out.read_bytes() == session_bytes(lines)
    sidecar = read_answers(answers_path_for(out))
    assert sidecar["needles"] == answers["needles"]
    assert len(sidecar["session_sha256"]) == 64
    session = read_session(out)
    assert session.last_turn == 60
    assert "wrote" in capsys.readouterr().out


def test_all_six_carriers_are_planted_where_the_answers_say(coding400):
    lines, answers = coding400
    turns = _turns(lines)
    carriers = Counter(n["carrier"] for n in answers["needles"])
    assert set(carriers) == {1, 2, 3, 4, 5, 6}
    for needle in answers["needles"]:
        messages = turns[needle["planted_turn"]]
        pattern = needle_pattern(needle["needle"])
        carrier = needle["carrier"]
        if carrier == 6:
            assert needle["planted_turn"] == 1 and messages[0]["role"] == "user"
            assert messages[0]["content"].startswith(answers["constraint"]["text"])
            assert answers["constraint"]["needle"] == needle["needle"]
        elif carrier == 1:
            assert pattern.search(_text(messages[0]))
        elif carrier == 5:
            final = messages[-1]
            assert final["role"] == "assistant" and not final.get("tool_calls")
            assert "Decision:" in final["content"] and pattern.search(final["content"])
        elif carrier == 2:
            hits = [m["content"] for m in messages if m["role"] == "tool" and pattern.search(m["content"])]
            assert len(hits) == 1
            out_lines = hits[0].split("\n")
            where = next(i for i, line in enumerate(out_lines) if pattern.search(line))
            assert len(out_lines) >= 200 and 0.4 < where / len(out_lines) < 0.6
        elif carrier == 3:
            hits = [m["content"] for m in messages if m["role"] == "tool" and pattern.search(m["content"])]
            assert len(hits) == 1 and len(hits[0]) >= 200_000
            notes = [r["note"] for r in json.loads(hits[0])["data"] if "note" in r]
            assert notes == [needle["needle"]]
        elif carrier == 4:
            old = needle_pattern(needle["old_needle"])
            assert needle["value"] != needle["old_value"]
            first = [
                m for m in messages if m["role"] == "tool" and m["name"] == "file_read" and old.search(m["content"])
            ]
            assert first, "the first read shows the old value"
            later = turns[needle["updated_turn"]]
            reread = [
                m for m in later if m["role"] == "tool" and m["name"] == "file_read" and pattern.search(m["content"])
            ]
            assert reread and not old.search(reread[-1]["content"]), "the re-read shows only the newer value"


def test_probes_are_in_range_follow_their_turn_and_match_the_answers(coding400):
    lines, answers = coding400
    expected = sorted((p["turn"], p["query"]) for n in answers["needles"] for p in n["probes"])
    found = []
    last_turn = 0
    for line in lines:
        if "probe" in line:
            assert line["probe"]["turn"] == last_turn
            found.append((line["probe"]["turn"], line["probe"]["query"]))
        else:
            last_turn = line["turn"]
    assert sorted(found) == expected
    for needle in answers["needles"]:
        base = needle.get("updated_turn") or needle["planted_turn"]
        assert [p["lag"] for p in needle["probes"]] == [lag for lag in PROBE_LAGS if base + lag <= 400]
        for probe in needle["probes"]:
            assert 1 <= probe["turn"] <= 400 and probe["turn"] == base + probe["lag"]
            assert probe["query"] == f"NEEDLE-{needle['id']} {needle['field']}"
    assert len({n["id"] for n in answers["needles"]}) == len(answers["needles"])
    assert all(re.fullmatch(r"[0-9a-f]{10}", n["id"]) for n in answers["needles"])


@pytest.mark.parametrize("kind", ["coding", "chatty", "tool-storm"])
def test_sessions_are_provider_valid(kind):
    lines, _ = generate(kind, 60, 5)
    assert session_problems(lines) == []
    ids = [c["id"] for m in (m for ms in _turns(lines).values() for m in ms) for c in m.get("tool_calls") or ()]
    assert len(ids) == len(set(ids))


def test_the_400_turn_session_is_valid_with_unique_ids(coding400):
    lines, _ = coding400
    assert session_problems(lines) == []


def test_kinds_have_their_shape():
    chatty = _turns(generate("chatty", 60, 2)[0])
    assert not any(m.get("tool_calls") or m["role"] == "tool" for ms in chatty.values() for m in ms)
    storm = _turns(generate("tool-storm", 60, 2)[0])
    widths = [len(m["tool_calls"]) for ms in storm.values() for m in ms if m.get("tool_calls")]
    assert len(widths) == 60 and min(widths) >= STORM_WIDTH


def test_coding_has_the_heavy_outputs_and_exact_rereads(coding400):
    lines, _ = coding400
    turns = _turns(lines)
    tool_outputs = [m["content"] for ms in turns.values() for m in ms if m["role"] == "tool"]
    assert sum(len(o) >= BIG_LOG_CHARS for o in tool_outputs) == 1, "one 1 MB log"
    assert sum(200_000 <= len(o) < BIG_LOG_CHARS for o in tool_outputs) == 400 // 25, "a 200 KB JSON every 25 turns"
    reads = Counter(
        m["content"] for ms in turns.values() for m in ms if m["role"] == "tool" and m["name"] == "file_read"
    )
    assert max(reads.values()) >= 3, "some files are re-read with identical output"
    pytest_logs = [o for o in tool_outputs if o.startswith("=====") and "test session starts" in o]
    assert any(" failed" in o.splitlines()[-1] for o in pytest_logs) and any(
        " failed" not in o.splitlines()[-1] for o in pytest_logs
    )
    assert any(o.startswith("diff --git") for o in tool_outputs)
    images = {
        t: p
        for t, ms in turns.items()
        for m in ms
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p.get("type") == "image_url"
    }
    assert sorted(images) == list(range(SCREENSHOT_EVERY, 401, SCREENSHOT_EVERY))
    for part in images.values():
        url = part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        png = base64.b64decode(url.split(",", 1)[1])
        assert 20_000 <= len(png) <= 100_000 and _png_ok(png)


def test_bad_arguments_are_refused_with_a_reason():
    with pytest.raises(ValueError, match="between 50 and 800"):
        generate("coding", 10, 1)
    with pytest.raises(ValueError, match="unknown workload kind"):
        generate("poetry", 100, 1)
