"""The compression intent is read from the user's latest message: the file it names survives masking.

Why through the agent: `build_intent` takes its focus from the latest user message and the
current turn's call paths, as stored by `Agent.turn`. A test that passes the focus by hand
(`compact(focus=...)`) keeps passing when the query is ignored; this one names the file only in
what the user typed, then checks the request the model gets after a full-tier event.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.agent_helpers import drive, make_agent

# Three ~3.5k-token reads and a 64k window (fresh tail ~6.4k tokens): the current turn's read
# fills the tail, so the two earlier reads are both candidates for masking.
WINDOW = 64_000
MASKED_PREFIX = "[old output masked"


def _read(call_id: str, path: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "file_read", "arguments": {"path": path}}]}


def _filler(path: Path, word: str) -> None:
    path.write_text("".join(f"{word} filler line {i:04d} with a few words\n" for i in range(400)))


def _tool_results(record: Path) -> list[str]:
    last = json.loads(record.read_text(encoding="utf-8").splitlines()[-1])
    return [m["content"] for m in last if m.get("role") == "tool"]


async def test_a_full_event_spares_the_output_of_the_file_the_user_just_asked_about(store, workspace, script, tmp_path):
    for name in ("alpha", "beta", "gamma"):
        _filler(workspace / f"{name}.txt", name)
    record = tmp_path / "requests.jsonl"
    model = script(
        _read("r1", "alpha.txt"),
        _read("r2", "beta.txt"),
        {"text": "read both"},
        _read("r3", "gamma.txt"),
        {"text": "beta ends at line 0399"},
        {"text": "sure"},
        context_window=WINDOW,
        record=str(record),
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "read the first two files")
    await drive(agent, "compare gamma with what beta.txt says in its last line")
    event = agent.engine.compact(agent.turn_input(), tier="full")
    assert event is not None and event["ops"].get("mask", 0) >= 1
    await drive(agent, "thanks")
    sent = _tool_results(record)
    [alpha] = [t for t in sent if "alpha filler" in t or "alpha.txt" in t]
    [beta] = [t for t in sent if "beta filler" in t or "beta.txt" in t]
    assert alpha.startswith(MASKED_PREFIX), "a file the query does not name is masked"
    assert not beta.startswith(MASKED_PREFIX) and "beta filler line 0399" in beta, "the file the user named stays"
