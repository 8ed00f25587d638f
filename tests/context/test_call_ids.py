"""Reused or empty tool-call ids are renamed before storing, and results follow their call."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.rows.call_ids import CallIdMap, unique_call_ids


def assistant(*ids: str) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": i, "type": "function", "function": {"name": "bash", "arguments": "{}"}} for i in ids],
    }


def result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_fresh_ids_pass_unchanged_and_the_message_is_not_copied():
    message = assistant("a", "b")
    out, pairs = unique_call_ids(message, set())
    assert out is message and pairs == [("a", "a"), ("b", "b")]


def test_ids_reused_across_turns_and_within_a_message_are_renamed_in_order():
    ids = CallIdMap()
    stream = [
        assistant("call_0"),
        result("call_0", "one"),
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "again"},
        assistant("call_0", "call_0", ""),
        result("call_0", "two"),
        result("call_0", "three"),
        result("", "four"),
    ]
    out = [ids.message(m) for m in stream]
    calls = [c["id"] for m in out if m.get("tool_calls") for c in m["tool_calls"]]
    assert calls == ["call_0", "call_0~1", "call_0~2", "call~1"]
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == ["call_0", "call_0~1", "call_0~2", "call~1"]
    assert stream[4]["tool_calls"][0]["id"] == "call_0", "inputs are not mutated"


@given(st.lists(st.lists(st.sampled_from(["", "a", "b", "call_0"]), min_size=1, max_size=4), max_size=12))
def test_every_call_id_is_unique_and_every_result_pairs_with_a_call_of_its_message(batches):
    ids = CallIdMap()
    seen: list[str] = []
    for batch in batches:
        message = ids.message(assistant(*batch))
        new = [c["id"] for c in message["tool_calls"]]
        results = [ids.message(result(old, "x"))["tool_call_id"] for old in batch]
        assert results == new, "each result takes the id of its own call, in order"
        seen += new
    assert len(seen) == len(set(seen))
