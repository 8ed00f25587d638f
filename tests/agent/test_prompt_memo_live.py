"""The per-request prefix memo (context/prefix_memo.py) through the live agent and the scripted
provider: later requests reuse the previous request's encode-safe copies and digests, and must
send exactly what a fresh computation gives."""

from __future__ import annotations

import json
import os
from pathlib import Path

from myrm_tui.context.stages.cache_optimize import message_digest
from myrm_tui.context.stages.encode_safe import encode_safe
from tests.agent.agent_helpers import drive, make_agent


def _scripted(tmp_path: Path, *turns: dict) -> tuple[str, Path]:
    record = tmp_path / "requests.jsonl"
    path = tmp_path / "memo-script.json"
    path.write_text(json.dumps({"turns": list(turns), "record": record.name}))
    return f"scripted/{path}", record


async def test_every_request_sends_what_a_fresh_encode_safe_pass_gives(store, workspace, tmp_path):
    os.close(os.open(os.fsencode(workspace) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    glob = {"tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "*.txt"}}]}
    model, record = _scripted(tmp_path, glob, {"text": "one"}, {"text": "two"}, {"text": "three"})
    agent = make_agent(store, workspace, model)
    for text in ("list the text files", "and now?", "once more"):
        await drive(agent, text)
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(requests) == 4
    for sent in requests[1:]:  # the glob result stays in the prompt, its surrogate replaced each time
        [tool] = [m for m in sent if m.get("role") == "tool"]
        assert "bad\ufffd.txt" in tool["content"]
    history = agent.engine.history
    prompt = agent.engine.assemble(agent.turn_input())
    again = agent.engine.assemble(agent.turn_input())  # all of it a memo hit now
    assert again.messages == prompt.messages == [encode_safe(m) for m in prompt.messages]
    rendered = [e.message for e in history.entries]
    assert history.digests(rendered) == [message_digest(m) for m in rendered]
