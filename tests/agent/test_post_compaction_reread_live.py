"""After the user's compact command, the next request re-reads the files the agent modified.

Why through `/compact` (`Agent.compact_now` → `summarize_now`): it is the compaction the user
starts, and the model must not edit from the stale copy its summary remembers.
"""

from __future__ import annotations

import json

from tests.agent.agent_helpers import compact_any_span, drive, make_agent

REREAD_TITLE = "re-read after compaction"


async def test_compact_then_the_next_request_carries_the_modified_file_as_it_is_now(store, workspace, script, tmp_path):
    record = tmp_path / "requests.jsonl"
    model = script(
        {"tool_calls": [{"id": "w1", "name": "file_write", "arguments": {"path": "app.py", "content": "v = 1\n"}}]},
        {"text": "wrote it"},
        {"text": "noted " + "words " * 200},
        {"text": "and noted " + "words " * 200},
        {"text": "carry on"},
        record=str(record),
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "write app.py")
    (workspace / "app.py").write_text("v = 2  # changed after the write\n")
    await drive(agent, "tell me about it")
    await drive(agent, "and more")
    event = await compact_any_span(agent).compact_now()
    assert event is not None and event["ops"].get("remove", 0) > 0
    await drive(agent, "go on")
    request = json.loads(record.read_text(encoding="utf-8").splitlines()[-1])
    [reread] = [m for m in request if REREAD_TITLE in str(m.get("content"))]
    assert reread["role"] == "user"
    assert "v = 2  # changed after the write" in reread["content"]
