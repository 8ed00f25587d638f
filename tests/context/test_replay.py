"""`myrm replay`: a recorded session through the real agent, reproducible byte for byte.

What matters to a reader of the figures: the replay takes the path a live session takes (the
agent's spill to the vault and its index, summaries from the summarizer model through the summary
client, the agent's interrupt for a call that never got a result), and the same session gives
the same bytes every time.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import myrm_tui.context.compaction.summarizers as context_summarizers
from myrm_tui.replay import ReplayOptions, replay

REPO_ROOT = Path(__file__).resolve().parents[2]


def call(cid: str, name: str, **arguments) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def session_lines():
    lines = []
    for t in range(1, 31):
        cid = f"c{t}"
        body = "\n".join(f"log line {i} of turn {t}" for i in range(400 if t != 7 else 9000))
        if t == 7:
            body += "\nNEEDLE-0a1b2c3d4e port=4821\n" + body  # > 100k chars: spilled to the vault
        lines.append(
            {
                "turn": t,
                "messages": [
                    {"role": "user", "content": f"turn {t}: check the logs"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [call(cid, "bash", command=f"cat run{t}.log")],
                    },
                    {"role": "tool", "tool_call_id": cid, "name": "bash", "content": body},
                    {"role": "assistant", "content": f"turn {t} looks fine"},
                ],
            }
        )
        if t in (12, 30):
            lines.append({"probe": {"turn": t, "query": "NEEDLE-0a1b2c3d4e port"}})
    return lines


def strip(record):
    return {k: v for k, v in record.items() if k not in ("engine_ms", "events")}


@pytest.mark.slow
def test_replay_is_reproducible_and_recall_finds_a_spilled_needle():
    options = ReplayOptions(window=16_000)
    first = [strip(r) for r in replay(session_lines(), options)]
    second = [strip(r) for r in replay(session_lines(), options)]
    assert first == second  # virtual clock: same session, same bytes (time ranges included)
    turns = [r for r in first if "prompt" in r]
    probes = [r for r in first if "query" in r]
    assert len(turns) == 30 and len(probes) == 2
    assert all(r["tokens"] + options.max_output_tokens <= options.window for r in turns)
    assert all("NEEDLE-0a1b2c3d4e port=4821" in p["result"] for p in probes)
    assert turns[-1]["prompt"][1]["content"] == "turn 1: check the logs"  # the anchor stays


def test_a_recorded_result_takes_the_live_spill_path():
    """40k characters: under the old replay's 100k ingest cap, over the agent's 30k tool cap. The
    prompt must show what a live session shows (an excerpt naming the vault handle), and the
    needle in the part it does not show must be found by recall."""
    body = (
        "\n".join(f"row {i} ok" for i in range(2_000))
        + "\nrow 2000.5 ok NEEDLE-77aa88bb99\n"  # the rows' shape: only the vault has it
        + "\n".join(f"row {i} ok" for i in range(2_000, 4_000))
    )
    lines: list[dict[str, Any]] = [
        {
            "turn": 1,
            "messages": [
                {"role": "user", "content": "dump the table"},
                {"role": "assistant", "content": None, "tool_calls": [call("d1", "bash", command="dump")]},
                {"role": "tool", "tool_call_id": "d1", "name": "bash", "content": body},
                {"role": "assistant", "content": "dumped"},
            ],
        },
        {"turn": 2, "messages": [{"role": "user", "content": "thanks"}, {"role": "assistant", "content": "ok"}]},
        {"probe": {"turn": 2, "query": "NEEDLE-77aa88bb99"}},
    ]
    turn1, turn2, probe = replay(lines, ReplayOptions(window=32_000))
    result = next(m for m in turn2["prompt"] if m.get("role") == "tool")
    assert "vault://" in result["content"] and "NEEDLE-77aa88bb99" not in result["content"]
    assert len(result["content"]) < len(body)
    assert "row 2000.5 ok NEEDLE-77aa88bb99" in probe["result"]
    # The turn's last request is the one before the final answer: the agent asked twice.
    assert [m["role"] for m in turn1["prompt"]][-2:] == ["assistant", "tool"]
    assert len([e for e in turn1["events"] if "ladder" in e]) == 2


@pytest.mark.slow
def test_summaries_come_from_the_summarizer_model_not_from_the_engine():
    assert not hasattr(context_summarizers, "SUMMARIZERS")  # no benchmark fake lives in context/
    records = list(replay(session_lines(), ReplayOptions(window=16_000, summarizer="oracle")))
    summaries = [s for r in records if "prompt" in r for s in r["events"][-1]["replay"]["summaries"]]
    assert summaries, "the background step ran once the prompt passed the full threshold"
    assert {s["model"] for s in summaries} == {"replay-summarizer/oracle"}
    assert all(s["attempts"] >= 1 for s in summaries)
    assert sum(r.get("summarizer_tokens", 0) for r in records) > 0  # the calls were made and counted


def test_unknown_summarizer_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="unknown summarizer 'nope'"):
        next(replay(session_lines(), ReplayOptions(window=16_000, summarizer="nope")))


def test_a_broken_recording_is_replayed_the_way_a_live_session_would_have_left_it():
    lines = [
        {
            "turn": 1,
            "messages": [
                {"role": "user", "content": "run both"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("a1", "bash", command="make a"), call("a2", "bash", command="make b")],
                },
                {"role": "tool", "tool_call_id": "a1", "name": "bash", "content": "built a"},
                # a2 never answered: the process was killed
            ],
        },
        {
            "turn": 2,
            "messages": [
                {"role": "tool", "tool_call_id": "zz", "name": "bash", "content": "orphan output"},
                {"role": "user", "content": "hello?"},
                {"role": "user", "content": "anyone there?"},
                {"role": "assistant", "content": "yes"},
            ],
        },
    ]
    turn1, turn2 = replay(lines, ReplayOptions(window=16_000))
    report1, report2 = turn1["events"][-1]["replay"], turn2["events"][-1]["replay"]
    assert report1["interrupted"] == 1
    assert report2["imported"] == 1  # the orphan result: no call of the agent's answers it
    # "hello?" got no recorded answer: the request failed, as a provider failure leaves it.
    assert any("no assistant message" in e for e in report2["turn_errors"])
    prompt = turn2["prompt"]
    results = {m["tool_call_id"]: m["content"] for m in prompt if m.get("role") == "tool"}
    assert results["a1"] == "built a"
    assert results["a2"].startswith("interrupted by user")
    users = [m["content"] for m in prompt if m.get("role") == "user"]
    assert users[-2:] == ["hello?", "anyone there?"]


def test_user_images_go_to_the_vault_and_back_into_the_prompt():
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
    content = [
        {"type": "text", "text": "what is on this screen?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
    ]
    lines = [
        {
            "turn": 1,
            "messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "a login form"}],
        }
    ]
    [turn] = replay(lines, ReplayOptions(window=16_000))
    [user] = [m for m in turn["prompt"] if m.get("role") == "user"]
    parts = {p["type"]: p for p in user["content"]}
    assert parts["text"]["text"] == "what is on this screen?"
    assert parts["image_url"]["image_url"]["url"] == f"data:image/png;base64,{png}"  # resolved for the model


@pytest.mark.slow
def test_the_cli_prints_what_the_in_process_replay_yields(tmp_path: Path):
    session = tmp_path / "s.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in session_lines()[:12]))
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "myrm_tui",
            "replay",
            str(session),
            "--window",
            "16000",
            "--summarizer",
            "head",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    via_cli = [strip(json.loads(line)) for line in out.read_text().splitlines()]
    in_process = [
        strip(json.loads(json.dumps(r)))
        for r in replay(session_lines()[:12], ReplayOptions(window=16_000, summarizer="head"))
    ]
    assert via_cli == in_process
    helped = subprocess.run(
        [sys.executable, "-m", "myrm_tui", "replay", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert "docs/replay-format.md" in helped.stdout
