"""llm_map and agentic_map through the live agent: a scripted parent calls the tool, scripted item
models answer each item (the provider answers by how many assistant messages a request holds, so
every item's first request gets turn 0 and its retry turn 1), and each item request is recorded,
so the tests count what the provider was really asked."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from myrm_tui.agent.events import ToolFinished, ToolOutputChunk
from myrm_tui.agent.map.progress import MARK
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent

SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["label", "score"],
}
GOOD = {"text": json.dumps({"label": "ok", "score": 3})}
BAD = {"text": '{"label": "ok", "score": "high"}'}  # score is not an integer


def scripted(tmp_path: Path, name: str, turns: list[dict]) -> tuple[str, Path]:
    record = tmp_path / f"{name}.jsonl"
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": turns, "record": record.name}), encoding="utf-8")
    return f"scripted/{path}", record


def requests(record: Path) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def items_asked(record: Path) -> list[str]:
    """The item each first request carried (retries carry the refusal instead)."""
    return [req[1]["content"] for req in requests(record) if len(req) == 2]


def map_call(call_id: str, tool: str = "llm_map", **arguments) -> dict:
    args = {"prompt": "Label the log line and score its severity 0-5.", "output_schema": SCHEMA, **arguments}
    return {"tool_calls": [{"id": call_id, "name": tool, "arguments": args}]}


def lines(n: int) -> list[str]:
    return [f"2026-12-02 worker-{i} request {i} finished in {i % 97} ms" for i in range(n)]


def parent_with_items(store, workspace, tmp_path, parent_turns, item_turns, **values):
    parent, parent_record = scripted(tmp_path, "parent", parent_turns)
    lite, item_record = scripted(tmp_path, "items", item_turns)
    agent = make_agent(store, workspace, parent, approval="yolo", lite_model=lite, **values)
    return agent, parent_record, item_record


def result_of(log, call_id: str) -> ToolFinished:
    [finished] = [e for e in log.of(ToolFinished) if e.call_id == call_id]
    return finished


def artifact_rows(store, handle: str | None) -> list[dict]:
    assert handle is not None, "the map's result names its artifact"
    return [json.loads(line) for line in store.vault.read_text(handle).splitlines()]


@pytest.mark.slow
async def test_a_map_over_300_items_runs_each_alone_and_the_parent_sees_only_a_compact_result(
    store, workspace, tmp_path
):
    items = lines(300)
    (workspace / "logs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    agent, parent_record, item_record = parent_with_items(
        store, workspace, tmp_path, [map_call("m1", items_file="logs.jsonl"), {"text": "done"}], [GOOD]
    )
    log = await drive(agent, "label every line of logs.jsonl")

    finished = result_of(log, "m1")
    assert finished.ok and finished.vault_handle
    asked = items_asked(item_record)
    assert len(asked) == 300 and sorted(asked) == sorted(f"<item>\n{x}\n</item>" for x in items)
    assert all(len(req) == 2 and "Label the log line" in req[0]["content"] for req in requests(item_record)), (
        "each item call sees only the instruction and its item"
    )
    rows = artifact_rows(store, finished.vault_handle)
    assert [r["index"] for r in rows] == list(range(300)) and {r["status"] for r in rows} == {"ok"}
    assert rows[17]["output"] == {"label": "ok", "score": 3}
    assert "300 ok" in finished.content and "0 failed" in finished.content
    # The parent's next request holds the compact result, not the items.
    second = json.dumps(requests(parent_record)[1])
    assert items[150] not in second and finished.vault_handle in second
    assert len(finished.content) < 2_000
    progress = "".join(e.text for e in log.of(ToolOutputChunk))
    assert f"{MARK}llm_map: 300 of 300" in progress and "150 of 300" in progress
    purposes = [e.data.get("purpose") for e in store.events(agent.session_id, event_kinds.USAGE)]
    assert purposes.count("llm_map") == 300, "every item call is priced with the session"


async def test_a_refused_output_is_retried_once_with_the_reason_then_the_item_fails(store, workspace, tmp_path):
    # Turn 0 (the first answer) is refused; turn 1 (the retry) passes for the first map.
    agent, _, item_record = parent_with_items(
        store, workspace, tmp_path, [map_call("m1", items=lines(4)), {"text": "done"}], [BAD, GOOD]
    )
    log = await drive(agent, "label these")
    rows = artifact_rows(store, result_of(log, "m1").vault_handle)
    assert [r["status"] for r in rows] == ["ok"] * 4 and all(r["attempts"] == 2 for r in rows)
    retries = [req for req in requests(item_record) if len(req) == 4]
    assert len(retries) == 4 and "score" in retries[0][3]["content"] and "refused" in retries[0][3]["content"]


async def test_an_output_refused_twice_marks_the_item_failed(store, workspace, tmp_path):
    agent, _, item_record = parent_with_items(
        store, workspace, tmp_path, [map_call("m1", items=lines(3)), {"text": "done"}], [BAD, BAD]
    )
    log = await drive(agent, "label these")
    finished = result_of(log, "m1")
    assert finished.status == "error" and "3 failed" in finished.content
    rows = artifact_rows(store, finished.vault_handle)
    assert [r["status"] for r in rows] == ["failed"] * 3 and "refused 2 times" in rows[0]["error"]
    assert len(requests(item_record)) == 6, "one retry per item, no more"
    assert not store.events(agent.session_id, event_kinds.MAP_ITEM), "failed items are not recorded as finished"


async def test_the_token_cap_stops_launching_new_items(store, workspace, tmp_path):
    usage = {"usage": {"prompt_tokens": 900, "completion_tokens": 100}}
    agent, _, item_record = parent_with_items(
        store,
        workspace,
        tmp_path,
        [map_call("m1", items=lines(200), concurrency=2, max_tokens=10_000), {"text": "done"}],
        [{**GOOD, **usage}],
    )
    log = await drive(agent, "label these")
    finished = result_of(log, "m1")
    asked = len(requests(item_record))
    assert 10 <= asked <= 12, f"1,000 tokens an item: the cap of 10,000 stops it after 10 (+ in flight), got {asked}"
    assert "token cap was reached" in finished.content
    rows = artifact_rows(store, finished.vault_handle)
    assert sum(r["status"] == "skipped" for r in rows) == 200 - asked


@pytest.mark.slow
async def test_a_map_cancelled_mid_way_resumes_without_rerunning_finished_items(store, workspace, tmp_path):
    slow = {**GOOD, "delay_ms": 20}
    agent, _, item_record = parent_with_items(
        store,
        workspace,
        tmp_path,
        [
            map_call("m1", items=lines(60), concurrency=4),
            map_call("m2", items=lines(60), concurrency=4),
            {"text": "ok"},
        ],
        [slow],
    )
    turn = asyncio.create_task(drive(agent, "label these"))
    while len(store.events(agent.session_id, event_kinds.MAP_ITEM)) < 20:
        await asyncio.sleep(0.01)
    turn.cancel()  # what Esc does to the turn
    with contextlib.suppress(asyncio.CancelledError):
        await turn
    kept = {e.data["key"] for e in store.events(agent.session_id, event_kinds.MAP_ITEM)}
    first_run = items_asked(item_record)
    assert 20 <= len(kept) < 60 and len(first_run) < 60

    log = await drive(agent, "go on")  # the model calls the same map again
    finished = result_of(log, "m2")
    second_run = items_asked(item_record)[len(first_run) :]
    assert len(second_run) == 60 - len(kept), "only the items not finished before are asked again"
    assert f"{len(kept)} from an earlier run" in finished.content and "60 ok" in finished.content
    assert sorted(set(first_run) | set(second_run)) == sorted(f"<item>\n{x}\n</item>" for x in lines(60))


async def test_agentic_map_gives_each_item_a_child_with_read_only_tools(store, workspace, tmp_path):
    (workspace / "a.txt").write_text("alpha\n", encoding="utf-8")
    (workspace / "b.txt").write_text("beta\n", encoding="utf-8")
    # Each child tries to write with bash (the parent runs in yolo: offered, it would run), then
    # reads a file, then answers.
    child_turns = [
        {"tool_calls": [{"id": "x1", "name": "bash", "arguments": {"command": "echo pwned > pwned.txt"}}]},
        {"tool_calls": [{"id": "r1", "name": "file_read", "arguments": {"path": "a.txt"}}]},
        {"text": json.dumps({"label": "read", "score": 1})},
    ]
    agent, _, item_record = parent_with_items(
        store,
        workspace,
        tmp_path,
        [map_call("m1", tool="agentic_map", files="*.txt", concurrency=2), {"text": "done"}],
        child_turns,
    )
    log = await drive(agent, "look at each text file")
    finished = result_of(log, "m1")
    assert finished.ok and "2 ok" in finished.content, finished.content
    assert not (workspace / "pwned.txt").exists(), "the child has no bash"
    first_requests = [req for req in requests(item_record) if not any(m["role"] == "assistant" for m in req)]
    assert sorted("path: a.txt" in json.dumps(r) for r in first_requests) == [False, True], "one item per child"
    children = [e.data["child"] for e in store.events(agent.session_id, "subagent") if "task" in e.data]
    assert len(children) == 2
    for child in children:
        results = {
            r.message.get("tool_call_id"): r.message["content"]
            for r in store.messages(child)
            if r.message.get("role") == "tool"
        }
        assert "alpha" in results["r1"], "read-only tools work"
        assert "bash" in results["x1"] and "alpha" not in results["x1"]
    rows = artifact_rows(store, finished.vault_handle)
    assert [r["output"] for r in rows] == [{"label": "read", "score": 1}] * 2


async def test_bad_arguments_get_a_clear_error_and_no_item_is_asked(store, workspace, tmp_path):
    bad_schema = {"type": "object", "properties": {"score": {"type": "no-such-type"}}}
    turns = [
        {
            "tool_calls": [
                {
                    "id": "b1",
                    "name": "llm_map",
                    "arguments": {"prompt": "x", "output_schema": bad_schema, "items": ["a"]},
                },
                {"id": "b2", "name": "llm_map", "arguments": {"prompt": "x", "output_schema": SCHEMA}},
                {
                    "id": "b3",
                    "name": "llm_map",
                    "arguments": {"prompt": "x", "output_schema": SCHEMA, "model": "gpt-4o", "items": ["a"]},
                },
            ]
        },
        {"text": "done"},
    ]
    agent, _, item_record = parent_with_items(store, workspace, tmp_path, turns, [GOOD])
    log = await drive(agent, "label these")
    assert "not a valid JSON Schema" in result_of(log, "b1").content
    assert "exactly one item source" in result_of(log, "b2").content
    assert '"lite" or "main"' in result_of(log, "b3").content, "only the configured models are reachable"
    assert all(not result_of(log, c).ok for c in ("b1", "b2", "b3")) and requests(item_record) == []


async def test_the_hits_of_a_search_are_items(store, workspace, tmp_path):
    agent, _, item_record = parent_with_items(
        store, workspace, tmp_path, [map_call("m1", search="OSPREY"), {"text": "done"}], [GOOD]
    )
    log = await drive(agent, "the OSPREY-7 incident: label what we know")
    assert result_of(log, "m1").ok
    asked = items_asked(item_record)
    assert asked and all(item.startswith("<item>\nmsg:") for item in asked)
    assert any("7 incident: label" in item for item in asked), "the user's message is a hit"
