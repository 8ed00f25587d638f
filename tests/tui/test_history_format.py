"""Pure helpers of the TUI: stored rows → transcript items, and one-line formatting."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.store.records import MessageRecord
from myrm_tui.tui.formatting import cap_text, format_duration, message_text, summarize_arguments
from myrm_tui.tui.transcript.history import AssistantItem, ToolItem, UserItem, build_history


def _rec(i: int, message: dict) -> MessageRecord:
    return MessageRecord(
        id=i,
        session_id="s",
        seq=i,
        role=message["role"],
        message=message,
        tokens=1,
        created_at=0.0,
        tool_call_id=message.get("tool_call_id"),
    )


def _call(call_id: str, command: str) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }


def test_results_pair_with_calls_and_statuses_come_from_the_agent_prefixes():
    rows: list[dict[str, Any]] = [
        {"role": "system", "content": "engine plumbing"},
        {"role": "user", "content": [{"type": "text", "text": "do things"}, {"type": "image_url"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("a", "ls"), _call("b", "rm x"), _call("c", "make"), _call("d", "x")],
        },
        {"role": "tool", "tool_call_id": "b", "content": "denied by user: rm x"},
        {"role": "tool", "tool_call_id": "a", "content": "file.txt"},
        {"role": "tool", "tool_call_id": "c", "content": "error: make failed (exit 2)"},
        {"role": "tool", "tool_call_id": "zz", "name": "grep", "content": "orphan"},
        {"role": "assistant", "content": "Done.", "reasoning_content": "thought"},
    ]
    history = build_history(_rec(i, m) for i, m in enumerate(rows))
    items = history.items
    assert isinstance(items[0], UserItem) and items[0].text == "do things\n[image]"
    tools = [i for i in items if isinstance(i, ToolItem)]
    assert [(t.call_id, t.status) for t in tools] == [
        ("a", "ok"),
        ("b", "denied"),
        ("c", "error"),
        ("d", "pending"),
        ("zz", "ok"),
    ]
    assert tools[3].content is None  # a call without a stored result stays visibly unfinished
    assert tools[4].name == "grep"
    assert items[-1] == AssistantItem("Done.", "thought")


def test_interrupted_and_refused_results():
    rows: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "tool_calls": [_call("a", "sleep 9"), _call("b", "ls")]},
        {"role": "tool", "tool_call_id": "a", "content": "interrupted by user: the call was stopped"},
        {"role": "tool", "tool_call_id": "b", "content": "refused: ls (approval policy is deny)"},
    ]
    tools = build_history(_rec(i, m) for i, m in enumerate(rows)).items
    assert [t.status if isinstance(t, ToolItem) else t for t in tools] == ["interrupted", "denied"]


def test_tail_keeps_the_newest_items_and_counts_the_rest():
    rows = [{"role": "user", "content": f"m{i}"} for i in range(10)]
    history = build_history((_rec(i, m) for i, m in enumerate(rows)), tail=3)
    assert [i.text if isinstance(i, (UserItem, AssistantItem)) else i for i in history.items] == ["m7", "m8", "m9"]
    assert history.hidden == 7


def test_argument_summary_prefers_the_telling_field():
    assert summarize_arguments({"command": "echo  hi\n  there"}) == "echo hi there"
    assert summarize_arguments('{"path": "src/a.py", "content": "..."}') == "src/a.py"
    assert summarize_arguments({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
    assert summarize_arguments("not json {") == "not json {"
    assert len(summarize_arguments({"command": "x" * 500}, limit=20)) == 20


def test_small_formatters():
    assert format_duration(0.25) == "250 ms" and format_duration(3.21) == "3.2 s"
    assert format_duration(125) == "2m05s"
    assert cap_text("abcdef", 4) == "abcd\n… 2 more characters"
    assert message_text(None) == "" and message_text("x") == "x"
