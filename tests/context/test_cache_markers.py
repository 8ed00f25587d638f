"""Cache markers on the request that is sent: which providers get them, where they go."""

from __future__ import annotations

import pytest

from myrm_tui.context.stages.cache_optimize import apply_markers, breakpoints_for, takes_cache_markers


def conversation() -> list[dict]:
    return [
        {"role": "system", "content": "You are myrm."},
        {"role": "user", "content": "read app.py"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"name": "file_read"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "print(1)"},
        {"role": "user", "content": [{"type": "text", "text": "now test it"}]},
    ]


def marked(messages: list[dict]) -> list[int]:
    out = []
    for i, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and "cache_control" in p for p in content):
            out.append(i)
    return out


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("claude-3-5-haiku-20241022", True),
        ("bedrock/anthropic.claude-3-haiku", True),
        ("dashscope/qwen-plus", True),
        ("openai/gpt-4o", False),
        ("deepseek/deepseek-chat", False),
        ("openrouter/qwen/qwen-2.5-72b-instruct", False),  # not DashScope's explicit cache
        ("local/smollm2", False),
    ],
)
def test_which_models_take_markers(model, expected):
    assert takes_cache_markers(model) is expected


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "dashscope/qwen-max"])
def test_markers_go_on_the_system_prompt_the_previous_end_and_the_newest_message(model):
    messages = conversation()
    points = breakpoints_for(len(messages), previous_len=4)
    wire = apply_markers(messages, points, model)
    assert marked(wire) == [0, 3, 4]
    assert wire[0]["content"][0]["text"] == "You are myrm.", "the text is unchanged, only wrapped"
    assert messages == conversation(), "the engine's own messages are not mutated"


def test_a_tool_call_only_turn_carries_no_marker_and_other_providers_get_none():
    messages = conversation()
    assert marked(apply_markers(messages, (2,), "anthropic/claude-sonnet-4-5")) == []
    assert apply_markers(messages, (0, 4), "openai/gpt-4o") is messages
