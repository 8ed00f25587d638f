"""What the summarizer reads: conversation whole, bulky payloads cut, pairing intact."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.context.summary.source import (
    ARGUMENT_CHARS,
    BATCH_CHARS,
    MIN_RESULT_CHARS,
    TOOL_RESULT_CHARS,
    summarizer_messages,
)


def call(cid: str, name: str = "bash", **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_tool_results_keep_head_and_tail_and_name_no_identifier_the_auditor_would_demand():
    log = "START " + "line of output\n" * 5000 + " VERDICT: 3 failed"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", command="pytest")]},
        {"role": "tool", "tool_call_id": "a", "content": log},
    ]
    out = summarizer_messages(messages)
    text = out[2]["content"]
    assert text.startswith("START") and text.endswith("VERDICT: 3 failed")
    assert "chars not shown here" in text and "ctx_expand" not in text and len(text) < TOOL_RESULT_CHARS + 100
    assert out[0] == messages[0], "the user's words are passed whole"
    assert [m["role"] for m in out] == ["user", "assistant", "tool"] and out[2]["tool_call_id"] == "a"
    assert messages[2]["content"] == log, "the input is not mutated"


def test_parallel_results_share_one_batch_allowance():
    calls = [call(f"c{i}", command=f"cat f{i}") for i in range(8)]
    messages = [{"role": "assistant", "content": "Gathering.", "tool_calls": calls}]
    messages += [{"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 3000} for i in range(8)]
    out = summarizer_messages(messages)
    per = max(MIN_RESULT_CHARS, BATCH_CHARS // 8)
    for message in out[1:]:
        assert len(message["content"]) < per + 120


def test_long_arguments_and_images_shrink_to_a_line():
    body = "z" * 50_000
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see screenshot"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "Q" * 9000}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [call("w", "file_write", path="a.py", content=body)]},
        {"role": "tool", "tool_call_id": "w", "content": "wrote a.py"},
    ]
    out = summarizer_messages(messages)
    assert "QQQQ" not in json.dumps(out[0]) and "see screenshot" in json.dumps(out[0])
    args = json.loads(out[1]["tool_calls"][0]["function"]["arguments"])
    assert args["path"] == "a.py" and len(args["content"]) <= ARGUMENT_CHARS + 1


def test_a_result_just_over_the_cap_passes_whole():
    text = "r" * (TOOL_RESULT_CHARS + 50)
    out = summarizer_messages([{"role": "tool", "tool_call_id": "a", "content": text}])
    assert out[0]["content"] == text
