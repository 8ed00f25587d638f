"""A full event masks read-only outputs before older command outputs (the masker's priority tiers).

Why an automatic event through the turns: the tiers decide what goes first only when the event
stops at its target, which the events a user sets off do (a forced one has no target and masks
every candidate). The session is idle past the cache TTL between turns (the engine's clock is
stepped), so the full tier runs when it is due instead of waiting for a warm cache to cool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.agent_helpers import drive, make_agent

# A 64k window: each output below stays whole on arrival and under the light tier's filter
# threshold (4 % of the prompt limit), so masking is the only step that can take it.
WINDOW = 64_000
MASKED_PREFIX = "[old output masked"
BIG_CHUNK = 1_000_000  # one streamed chunk per answer: the default 7 characters make padding slow
IDLE_S = 3_600  # past every provider's cache TTL


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _tool_results(record: Path) -> list[str]:
    last = json.loads(record.read_text(encoding="utf-8").splitlines()[-1])
    return [m["content"] for m in last if m.get("role") == "tool"]


@pytest.mark.slow
async def test_a_full_event_masks_the_file_reads_and_keeps_the_older_command_outputs(
    store, workspace, script, tmp_path
):
    for n in range(3):
        # 110 lines: grep's `path:line: ` prefixes make each output about the size 170 lines of a
        # file_read were (whole on arrival, under the light tier's filter threshold).
        (workspace / f"part{n}.txt").write_text("".join(f"part {n} reference line {i:03d} text\n" for i in range(110)))
    loop = 'for i in $(seq 1 140); do echo "build {n} step $i finished"; done'
    turns: list[dict[str, Any]] = [_call(f"b{n}", "bash", command=loop.format(n=n)) for n in range(2)]
    turns += [{"text": "built"}]
    # Read-only outputs through grep: a file_read of a file's current version is protected from
    # masking (context/observations/file_protection.py), a grep output is a read-only output like any other.
    turns += [_call(f"r{n}", "grep", pattern=".", path=f"part{n}.txt") for n in range(3)]
    turns += [{"text": "read them"}]
    turns += [{"text": "noted " + "padding words " * 3_000, "chunk_size": BIG_CHUNK} for _ in range(12)]
    record = tmp_path / "requests.jsonl"
    agent = make_agent(store, workspace, script(*turns, context_window=WINDOW, record=str(record)), approval="yolo")
    now = [1_000_000.0]
    agent.engine.clock = lambda: now[0]
    events: list[dict[str, Any]] = []
    for text in ["run the builds", "read the parts", *(f"question {n}" for n in range(12))]:
        now[0] += IDLE_S
        await drive(agent, text)
        events = [e.data for e in store.events(agent.session_id, "compaction") if e.data.get("state") == "done"]
        if any(e["tier"] == "full" for e in events):
            break
    [full] = [e for e in events if e["tier"] == "full"]
    sent = _tool_results(record)
    reads = [t for t in sent if "part " in t or "file_read" in t]
    builds = [t for t in sent if "build " in t]
    assert len(reads) == 3 and len(builds) == 2
    masked_reads = [t for t in reads if t.startswith(MASKED_PREFIX)]
    # The event stopped at its target with read-only outputs alone: the older ones were not reached.
    assert full["ops"] == {"mask": len(masked_reads)} and masked_reads, full
    assert not any(t.startswith(MASKED_PREFIX) for t in builds), "older command outputs stay whole"
