"""File reads and edits protected from compaction (the seed's tool protection whitelist), through
the live agent: what the provider receives after a full event (context/observations/file_protection.py).

Why through the agent: the protection decides what a request holds after `Agent.turn` stored
real tool results (file_read's page, file_edit's arguments) and the engine compacted them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.context.window.config import DEFAULT_CONFIG
from tests.agent.agent_helpers import drive, make_agent

# The first request (an anchor, never masked) with the fixed prefix is over the full tier's target
# (50 % of B at a 16k window), so the event masks and cuts everything it may.
ANCHOR = "the task: tidy the code. " + " ".join(f"w{i}" for i in range(1_500))
REPORT = "".join(f"line {k:03d} of the report with some words in it\n" for k in range(18))
SOURCE = "".join(f"def helper_{k}(x):\n    return x + {k}\n" for k in range(40))


def requests(record: Path) -> list[list[dict[str, Any]]]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def read(n: int, path: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": f"c{n}", "name": "file_read", "arguments": {"path": path}}]}


def reports(workspace: Path, start: int, count: int) -> list[dict[str, Any]]:
    """Turns reading reports through grep: outputs that push the earlier turns out of the tail."""
    turns: list[dict[str, Any]] = []
    for n in range(start, start + count):
        (workspace / f"r{n}.txt").write_text(f"REPORT {n}\n{REPORT}END {n}\n")
        call = {"id": f"c{n}", "name": "grep", "arguments": {"pattern": ".", "path": f"r{n}.txt"}}
        turns += [{"tool_calls": [call]}, {"text": f"report {n} read"}]
    return turns


async def after_full_event(agent, record: Path, asks: list[str]) -> list[dict[str, Any]]:
    for ask in asks:
        await drive(agent, ask)
    event = agent.engine.assemble(agent.turn_input(force_tier="full", trigger="manual")).report.event
    assert event is not None and event.ops.get("mask"), "the full event masked outputs"
    await drive(agent, "what is left to do?")
    return requests(record)[-1]


def tool_texts(request: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request if m.get("role") == "tool")


async def test_a_current_read_stays_whole_and_a_read_of_an_edited_file_is_masked(store, workspace, script, tmp_path):
    (workspace / "a.py").write_text(SOURCE + "# END a\n")
    (workspace / "b.py").write_text(SOURCE + "# END b\n")
    record = tmp_path / "reads.jsonl"
    edit = {"id": "e1", "name": "file_edit", "arguments": {"path": "b.py", "old": "return x + 0", "new": "return x"}}
    turns = [
        {"text": "ok"},
        read(1, "a.py"),
        {"text": "a read"},
        read(2, "b.py"),
        {"text": "b read"},
        {"tool_calls": [edit]},
        {"text": "b edited"},
        *reports(workspace, 10, 6),
        {"text": "done"},
    ]
    model = script(*turns, context_window=16_000, record=str(record))
    agent = make_agent(store, workspace, model, max_output_tokens=1024)
    asks = [ANCHOR, "read a.py", "read b.py", "edit b.py", *(f"report {n}" for n in range(10, 16))]
    sent = tool_texts(await after_full_event(agent, record, asks))
    assert "# END a" in sent, "a.py is as read: its read stays whole"
    assert "# END b" not in sent, "b.py changed since: that read is an old version and is masked"
    assert "END 10" not in sent, "ordinary outputs are masked as before"


async def test_a_5_mb_read_is_masked_to_a_stub_naming_the_file_and_a_small_current_read_is_not(
    store, workspace, script, tmp_path
):
    (workspace / "big.log").write_text("".join(f"event {k:07d} happened at some point\n" for k in range(150_000)))
    assert (workspace / "big.log").stat().st_size > 5_000_000
    (workspace / "a.py").write_text(SOURCE + "# END a\n")
    record = tmp_path / "big.jsonl"
    turns = [{"text": "ok"}, read(1, "big.log"), {"text": "big read"}, read(2, "a.py"), {"text": "a read"}]
    model = script(*turns, *reports(workspace, 10, 6), {"text": "done"}, context_window=16_000, record=str(record))
    agent = make_agent(store, workspace, model, max_output_tokens=1024)
    asks = [ANCHOR, "read big.log", "read a.py", *(f"report {n}" for n in range(10, 16))]
    request = await after_full_event(agent, record, asks)
    sent = tool_texts(request)
    assert "# END a" in sent, "the small current read stays whole"
    [big] = [str(m["content"]) for m in request if m.get("role") == "tool" and "big.log" in str(m.get("content"))]
    assert "event 0000100" not in big, "the page of the 5 MB file is not sent again"
    assert 'ctx_expand("' in big and len(big) < 600, big


@pytest.mark.slow
async def test_an_edits_text_is_kept_up_to_the_bound_and_cut_around_a_precise_stub_above_it(
    store, workspace, script, tmp_path
):
    old = "".join(f"old_{k} = {k}\n" for k in range(20))  # ~220 characters: under the bound
    new = "".join(f"new_{k} = {k}\n" for k in range(250))  # ~2,800 characters
    large = "".join(f"large_{k} = {k}\n" for k in range(1_000))  # ~14,000 characters
    (workspace / "e.py").write_text(old)
    record = tmp_path / "edits.jsonl"
    edit = {"id": "w1", "name": "file_edit", "arguments": {"path": "e.py", "old": old, "new": new}}
    write = {"id": "w2", "name": "file_write", "arguments": {"path": "l.py", "content": large}}
    turns = [{"tool_calls": [edit]}, {"text": "e edited"}, {"tool_calls": [write]}, {"text": "l written"}]
    model = script(
        {"text": "ok"}, *turns, *reports(workspace, 10, 6), {"text": "done"}, context_window=16_000, record=str(record)
    )
    agent = make_agent(store, workspace, model, max_output_tokens=1024)
    asks = [ANCHOR, "edit e.py", "write l.py", *(f"report {n}" for n in range(10, 16))]
    request = await after_full_event(agent, record, asks)
    sent = {
        call["function"]["name"]: json.loads(call["function"]["arguments"])
        for m in request
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or ()
    }
    assert sent["file_edit"]["old"] == old, "an edit's text under the bound is sent whole"
    for cut, whole, head, tail in (
        (sent["file_edit"]["new"], new, "new_0 = 0\n", "new_249 = 249\n"),
        (sent["file_write"]["content"], large, "large_0 = 0\n", "large_999 = 999\n"),
    ):
        assert cut != whole and cut.startswith(head) and cut.endswith(tail), "head and tail"
        assert f"of {len(whole):,} chars" in cut and 'ctx_expand("' in cut, "the stub says how much and where"
        assert len(cut) > DEFAULT_CONFIG.edit_keep_chars, "the bound's head and tail, and the stub"
