"""The objective note through the live agent: the scripted provider records what it was sent.

Before any compaction the prompt ends on the conversation; after the compact command, with the
`restate_objective` setting on, it ends on a user-role note restating the first request, right
after the latest user message, the same bytes on the next turn.
"""

from __future__ import annotations

import json

from tests.agent.agent_helpers import drive, make_agent

ANCHOR = "Build the invoice exporter in src/export.py; never touch the vendor/ folder."
REPLY = "Here is what I did: " + "the exporter writes rows and totals. " * 40


def scripted(tmp_path, name: str = "main") -> tuple[str, object]:
    record = tmp_path / f"{name}.jsonl"
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": [{"text": REPLY}] * 60, "context_window": 32_000, "record": record.name}))
    return f"scripted/{path}", record


def requests(record) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def is_note(message: dict) -> bool:
    return message.get("role") == "user" and "session's objective" in text(message)


async def test_after_the_compact_command_the_objective_is_restated_at_the_end(store, workspace, tmp_path):
    model, record = scripted(tmp_path)
    agent = make_agent(store, workspace, model, restate_objective="on")
    await drive(agent, ANCHOR)
    for n in range(8):
        await drive(agent, f"question {n}: add the next column to the export")
    before = requests(record)
    assert before and not any(is_note(m) for request in before for m in request), "no note before a compaction"

    event = await agent.compact_now()
    assert event is not None and event["saved"] > 0

    await drive(agent, "what is left to do?")
    last = requests(record)[-1]
    assert is_note(last[-1]) and ANCHOR in text(last[-1]), "the anchor is restated in the last message"
    assert last[-2]["role"] == "user" and text(last[-2]) == "what is left to do?", "right after the latest ask"
    assert not any(m["role"] == "system" and "session's objective" in text(m) for m in last)

    await drive(agent, "and the totals row?")
    newer = requests(record)[-1]
    assert newer[-1] == last[-1], "the note is the same bytes turn after turn"
    assert newer[: len(last) - 1] == last[:-1], "the next request extends the previous one up to the note"


async def test_by_default_no_note_is_sent(store, workspace, tmp_path):
    model, record = scripted(tmp_path)
    agent = make_agent(store, workspace, model)
    await drive(agent, ANCHOR)
    for n in range(8):
        await drive(agent, f"question {n}: add the next column to the export")
    assert await agent.compact_now() is not None
    await drive(agent, "what is left to do?")
    assert not any(is_note(m) for m in requests(record)[-1])
