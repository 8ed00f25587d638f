"""Dangling tool calls (a call with no result, e.g. after a crash) get a synthetic answer."""

from __future__ import annotations

from typing import Any

from myrm_tui.store import Store, event_kinds
from myrm_tui.store.constants import INTERRUPTED_TOOL_CONTENT
from myrm_tui.store.database.repair import find_dangling_calls


def _call(call_id: str, name: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_one_of_two_calls_unanswered_gets_one_synthetic_result(store: Store):
    s = store.create_session("m")
    store.append_message(s.id, {"role": "user", "content": "list and read"}, tokens=3)
    store.append_message(
        s.id,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("call_a", "glob"), _call("call_b", "file_read")],
        },
        tokens=20,
    )
    store.append_message(s.id, {"role": "tool", "tool_call_id": "call_a", "name": "glob", "content": "a.py"}, tokens=2)

    assert store.repair_dangling_tool_calls(s.id) == ["call_b"]
    last = store.messages(s.id)[-1]
    assert last.message == {
        "role": "tool",
        "tool_call_id": "call_b",
        "name": "file_read",
        "content": INTERRUPTED_TOOL_CONTENT,
    }
    assert last.tool_call_id == "call_b" and last.tool_names == ("file_read",)
    assert last.tokens == len(INTERRUPTED_TOOL_CONTENT) // 4 + 4
    (event,) = store.events(s.id, kind=event_kinds.REPAIR)
    assert event.data == {"repaired_call_ids": ["call_b"]}

    rows_before = len(store.messages(s.id))
    assert store.repair_dangling_tool_calls(s.id) == []
    assert len(store.messages(s.id)) == rows_before
    assert len(store.events(s.id, kind=event_kinds.REPAIR)) == 1


def test_result_must_come_after_the_call(store: Store):
    s = store.create_session("m")
    # A tool result for "x" that precedes the call does not answer it.
    store.append_message(s.id, {"role": "tool", "tool_call_id": "x", "name": "bash", "content": "early"}, tokens=1)
    store.append_message(s.id, {"role": "assistant", "content": "", "tool_calls": [_call("x", "bash")]}, tokens=1)
    assert store.repair_dangling_tool_calls(s.id) == ["x"]


def test_fork_repairs_calls_shared_from_parent_without_touching_parent(store: Store):
    parent = store.create_session("m")
    store.append_message(parent.id, {"role": "user", "content": "go"}, tokens=1)
    call_row = store.append_message(
        parent.id, {"role": "assistant", "content": None, "tool_calls": [_call("c1", "bash")]}, tokens=1
    )
    child = store.fork(parent.id, at_message=call_row.id)
    store.append_message(parent.id, {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "ok"}, tokens=1)

    assert store.repair_dangling_tool_calls(parent.id) == []
    assert store.repair_dangling_tool_calls(child.id) == ["c1"]
    assert store.messages(child.id)[-1].session_id == child.id
    assert [m.message.get("content") for m in store.messages(parent.id)][-1] == "ok"


def test_finder_ignores_malformed_calls_and_reports_each_id_once():
    history: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "tool_calls": [_call("a", "t1"), {"type": "function"}, "junk", _call("a", "t1")],
        },
        {"role": "assistant", "tool_calls": None, "content": "no calls"},
        {"role": "assistant", "tool_calls": [_call("b", "t2")]},
        {"role": "tool", "tool_call_id": "b", "content": "done"},
    ]
    assert [(c.call_id, c.name) for c in find_dangling_calls(history)] == [("a", "t1")]
