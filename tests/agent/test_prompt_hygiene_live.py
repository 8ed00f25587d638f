"""Outgoing-prompt hygiene through the live agent and the scripted provider: what the provider
receives is cleaned, what the store keeps is the original."""

from __future__ import annotations

import json
import os
from pathlib import Path

from myrm_tui.agent.events import TurnError
from tests.agent.agent_helpers import drive, make_agent


def _scripted(tmp_path: Path, *turns: dict) -> tuple[str, Path]:
    record = tmp_path / "requests.jsonl"
    path = tmp_path / "hygiene-script.json"
    path.write_text(json.dumps({"turns": list(turns), "record": record.name}))
    return f"scripted/{path}", record


def _requests(record: Path) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


async def test_inline_reasoning_is_stored_but_not_sent_back(store, workspace, tmp_path):
    model, record = _scripted(tmp_path, {"text": "<think>the user wants a greeting</think>\n\nHello!"}, {"text": "ok"})
    agent = make_agent(store, workspace, model)
    await drive(agent, "greet me")
    await drive(agent, "again")
    stored = [r.message for r in store.messages(agent.session_id) if r.role == "assistant"]
    assert stored[0]["content"].startswith("<think>"), "the store keeps the reply as it came"
    [sent] = [m for m in _requests(record)[-1] if m.get("role") == "assistant"]
    assert sent["content"] == "Hello!"


async def test_a_lone_surrogate_from_a_tool_reaches_the_provider_as_replacement(store, workspace, tmp_path):
    # A file name that is not UTF-8: Python lists it with a lone surrogate (surrogateescape).
    os.close(os.open(os.fsencode(workspace) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    model, record = _scripted(
        tmp_path, {"tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "*.txt"}}]}, {"text": "done"}
    )
    agent = make_agent(store, workspace, model)
    log = await drive(agent, "list the text files")
    assert not log.of(TurnError)
    [tool_row] = [r for r in store.messages(agent.session_id) if r.role == "tool"]
    assert "bad\udcff.txt" in tool_row.message["content"], "the store keeps the original (lossless)"
    [sent] = [m for m in _requests(record)[-1] if m.get("role") == "tool"]
    assert "bad\ufffd.txt" in sent["content"]
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(_requests(record), ensure_ascii=False))
