"""Property tests: whatever the stored history looks like, the assembled prompt is valid."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.rows.integrity import SYNTHETIC_INTERRUPTED, repair_pairs
from tests.hypothesis_profiles import examples

CALL_IDS = st.sampled_from(["a", "b", "c", "d", "e"])


@st.composite
def histories(draw):
    """Arbitrary interleavings: parallel calls, missing/duplicate/orphan results, stray roles."""
    messages = []
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "assistant_tools", "tool"]))
        if kind == "user":
            messages.append({"role": "user", "content": draw(st.text(max_size=5))})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": "ok"})
        elif kind == "assistant_tools":
            ids = draw(st.lists(CALL_IDS, min_size=1, max_size=3))
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "bash", "arguments": "{}"}} for i in ids
                    ],
                }
            )
        else:
            messages.append({"role": "tool", "tool_call_id": draw(CALL_IDS), "content": "r"})
    return messages


def assert_valid(out):
    assert not out or out[0]["role"] == "user"
    i = 0
    while i < len(out):
        message = out[i]
        assert message["role"] != "tool", f"tool result at {i} not right after its call"
        i += 1
        if message["role"] == "assistant" and message.get("tool_calls"):
            expected = [c["id"] for c in message["tool_calls"]]
            got = []
            while i < len(out) and out[i]["role"] == "tool":
                got.append(out[i]["tool_call_id"])
                i += 1
            assert got == expected


@given(histories())
@settings(max_examples=examples(300), deadline=None)
def test_repair_always_gives_a_provider_valid_list(history):
    out, report = repair_pairs(history)
    assert_valid(out)


@given(histories())
@settings(max_examples=examples(200), deadline=None)
def test_repair_is_deterministic_and_idempotent(history):
    once, _ = repair_pairs(history)
    again, _ = repair_pairs(history)
    assert once == again
    twice, report = repair_pairs(once)
    assert twice == once
    assert report.dangling_repaired == [] and report.orphans_dropped == 0


@given(histories())
@settings(max_examples=examples(200), deadline=None)
def test_every_real_result_survives_when_its_call_exists(history):
    out, report = repair_pairs(history)
    real_results = [m for m in out if m["role"] == "tool" and m["content"] != SYNTHETIC_INTERRUPTED]
    stored_results = [m for m in history if m["role"] == "tool"]
    assert len(real_results) + report.orphans_dropped == len(stored_results)


@given(histories())
@settings(max_examples=examples(200), deadline=None)
def test_repair_never_drops_user_or_assistant_messages(history):
    out, _ = repair_pairs(history)
    kept = [m for m in out if m["role"] in ("user", "assistant")]
    original = [m for m in history if m["role"] in ("user", "assistant")]
    # Only a synthetic first user message may be added in front.
    assert kept[len(kept) - len(original) :] == original


def test_dangling_call_gets_synthetic_result_and_orphan_is_dropped():
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "y", "type": "function", "function": {"name": "grep", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "y", "content": "found"},
        {"role": "tool", "tool_call_id": "zzz", "content": "orphan"},
    ]
    out, report = repair_pairs(history)
    assert [m.get("tool_call_id") for m in out[2:]] == ["x", "y"]
    assert out[2]["content"] == SYNTHETIC_INTERRUPTED and out[2]["name"] == "bash"
    assert report.dangling_repaired == ["x"] and report.orphans_dropped == 1
