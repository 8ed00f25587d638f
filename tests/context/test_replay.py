"""`myrm replay`: the real engine on a recorded session, reproducible byte for byte."""

from __future__ import annotations

import json

from myrm_tui.replay import ReplayOptions, replay


def session_lines():
    lines = []
    for t in range(1, 31):
        cid = f"c{t}"
        body = "\n".join(f"log line {i} of turn {t}" for i in range(400 if t != 7 else 9000))
        if t == 7:
            body += "\nNEEDLE-0a1b2c3d4e port=4821\n" + body  # > 100k chars: spilled to the vault
        lines.append({"turn": t, "messages": [
            {"role": "user", "content": f"turn {t}: check the logs"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                    {"command": f"cat run{t}.log"})}}]},
            {"role": "tool", "tool_call_id": cid, "name": "bash", "content": body},
            {"role": "assistant", "content": f"turn {t} looks fine"},
        ]})
        if t in (12, 30):
            lines.append({"probe": {"turn": t, "query": "NEEDLE-0a1b2c3d4e port"}})
    return lines


def strip(record):
    return {k: v for k, v in record.items() if k not in ("engine_ms", "events")}


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
