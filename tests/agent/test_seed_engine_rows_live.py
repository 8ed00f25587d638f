"""Seed-audit engine rows through the live agent (docs/seed-audit.md): security pins, the masker's
ephemeral and protected tiers, the `protected_tools` setting. Real tools, the scripted model, a
real store, and the requests the provider received (the script's `record` file).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.context.observations.masker_tiers import EPHEMERAL_KEEP_TURNS
from myrm_tui.context.recall.answers import ctx_expand
from tests.agent.agent_helpers import compact_any_span, drive, make_agent

WINDOW = 64_000
MASKED_PREFIX = "[old output masked"
EPHEMERAL_PREFIX = "[stale status output dropped"
RULE = "Never push to the main branch; you may only edit files under src/."
# A user message of ~900 tokens: a dozen of them outgrow the fresh tail (10 % of WINDOW).
BULK = " ".join(f"context word {i}" for i in range(300))


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command}}]}


def last_request(record: Path) -> list[dict[str, Any]]:
    return json.loads(record.read_text(encoding="utf-8").splitlines()[-1])


def texts(request: list[dict[str, Any]], role: str) -> list[str]:
    return [
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in request
        if m.get("role") == role
    ]


async def test_a_rule_the_user_states_mid_session_survives_the_compact_command_verbatim(
    store, workspace, script, tmp_path
):
    record = tmp_path / "requests.jsonl"
    replies = [{"text": f"answer {i}"} for i in range(12)]
    model = script(*replies, context_window=WINDOW, record=str(record))
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "help me with the repository")
    await drive(agent, RULE)
    # A rule-like sentence inside a tool output or an assistant answer is not the user's.
    for i in range(8):
        await drive(agent, f"question {i} about the code")
    event = await compact_any_span(agent).compact_now()
    assert event is not None
    await drive(agent, "what next")
    users = texts(last_request(record), "user")
    assert RULE in users, "the pinned rule is sent as the user wrote it"
    assert not any(u == "question 0 about the code" for u in users), "an ordinary old turn was summarized"
    assert agent.engine.history.pinned_rows == [2]


async def test_old_status_output_is_dropped_to_its_handle_and_an_ordinary_output_is_masked(
    store, workspace, script, tmp_path
):
    record = tmp_path / "requests.jsonl"
    turns: list[dict[str, Any]] = [
        bash("s1", "git status"),
        {"text": "status read"},
        bash("e1", 'for i in $(seq 1 80); do echo "ordinary record $i"; done'),
        {"text": "records read"},
    ]
    turns += [{"text": f"answer {i}"} for i in range(EPHEMERAL_KEEP_TURNS + 2)]
    model = script(*turns, context_window=WINDOW, record=str(record))
    agent = make_agent(store, workspace, model, approval="yolo")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    for i in range(60):
        (workspace / f"untracked_file_number_{i:02d}.txt").write_text("x\n")
    await drive(agent, "show the status")
    await drive(agent, "print the records")
    for i in range(EPHEMERAL_KEEP_TURNS + 1):
        await drive(agent, f"question {i}: {BULK}")
    event = agent.engine.compact(agent.turn_input(), tier="full")
    assert event is not None and event["ops"].get("ephemeral") == 1
    await drive(agent, "and now")
    tools = texts(last_request(record), "tool")
    [status] = [t for t in tools if t.startswith(EPHEMERAL_PREFIX)]
    assert any(t.startswith(MASKED_PREFIX) and "ordinary record" in t for t in tools)
    # Still recoverable from the store by its handle.
    handle = status.split('ctx_expand("')[1].split('"')[0]
    assert "untracked_file_number_59.txt" in ctx_expand(store, agent.session_id, handle)


@pytest.mark.parametrize("protected", ["session_note", "bash, grep"])
async def test_the_protected_tools_setting_keeps_a_tools_outputs_whole(store, workspace, script, tmp_path, protected):
    record = tmp_path / "requests.jsonl"
    turns: list[dict[str, Any]] = [
        bash("e1", 'for i in $(seq 1 80); do echo "kept record $i"; done'),
        {"text": "records read"},
    ]
    turns += [{"text": f"answer {i}"} for i in range(10)]
    model = script(*turns, context_window=WINDOW, record=str(record))
    agent = make_agent(store, workspace, model, approval="yolo", protected_tools=protected)
    await drive(agent, "print the records")
    for i in range(8):
        await drive(agent, f"question {i}: {BULK}")
    agent.engine.compact(agent.turn_input(), tier="full")
    await drive(agent, "and now")
    [output] = [t for t in texts(last_request(record), "tool") if "kept record" in t]
    if protected == "session_note":
        assert output.startswith(MASKED_PREFIX), "without the setting the output is masked"
    else:
        assert "kept record 80" in output and not output.startswith(MASKED_PREFIX)
