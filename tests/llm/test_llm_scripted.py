"""The scripted provider, driven through stream() and therefore through litellm."""

from __future__ import annotations

import json

import pytest

from myrm_tui.llm import errors
from myrm_tui.llm.events import FinishEvent, ReasoningDelta, RetryEvent, TextDelta, ToolCallEvent, UsageEvent
from myrm_tui.llm.fake_providers import scripted

USER = [{"role": "user", "content": "go"}]


def kinds(events: list) -> list[type]:
    return [type(e) for e in events]


async def test_text_streams_in_chunks_with_usage_and_finish(write_script, collect):
    model = write_script([{"text": "Hello, scripted world!", "chunk_size": 5}])
    events = await collect(model, USER)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", scr", "ipted", " worl", "d!"]
    usage = next(e for e in events if isinstance(e, UsageEvent))
    assert usage.prompt_tokens > 0 and usage.completion_tokens == 6  # ceil(22 chars / 4)
    assert events[-1] == FinishEvent("stop", {"role": "assistant", "content": "Hello, scripted world!"})


async def test_reasoning_and_parallel_tool_calls(write_script, collect):
    model = write_script(
        [
            {
                "reasoning": "I should list and grep.",
                "text": "Running two tools.",
                "tool_calls": [
                    {"id": "call_a", "name": "bash", "arguments": {"command": "ls -la", "timeout": 5}},
                    {"name": "grep", "arguments": {"pattern": "TODO", "path": "src/"}},
                ],
                "usage": {
                    "prompt_tokens": 1200,
                    "completion_tokens": 40,
                    "cached_read_tokens": 1000,
                    "cached_write_tokens": 150,
                },
                "chunk_size": 4,
            }
        ]
    )
    events = await collect(model, USER)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == "I should list and grep."
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.name for c in calls] == ["bash", "grep"]
    assert calls[0].id == "call_a"
    assert calls[0].arguments == {"command": "ls -la", "timeout": 5}
    assert calls[1].arguments == {"pattern": "TODO", "path": "src/"}
    assert calls[1].id.startswith("call_") and calls[1].id != calls[0].id
    assert all(c.parse_error is None for c in calls)
    usage = next(e for e in events if isinstance(e, UsageEvent))
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_read_tokens, usage.cached_write_tokens) == (
        1200,
        40,
        1000,
        150,
    )
    finish = events[-1]
    assert finish.reason == "tool_calls"
    assert finish.message == {
        "role": "assistant",
        "content": "Running two tools.",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": "ls -la", "timeout": 5})},
            },
            {
                "id": calls[1].id,
                "type": "function",
                "function": {"name": "grep", "arguments": json.dumps({"pattern": "TODO", "path": "src/"})},
            },
        ],
        "reasoning_content": "I should list and grep.",
    }
    # Tool calls are complete events: all of them come after the text, before usage and finish.
    order = kinds(events)
    assert order.index(ToolCallEvent) > max(i for i, k in enumerate(order) if k is TextDelta)
    assert order[-2:] == [UsageEvent, FinishEvent]


async def test_generated_call_ids_are_deterministic(write_script, collect):
    model = write_script([{"tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]}])
    first = [e for e in await collect(model, USER) if isinstance(e, ToolCallEvent)]
    second = [e for e in await collect(model, USER) if isinstance(e, ToolCallEvent)]
    assert first[0].id == second[0].id
    finish_content = next(e for e in await collect(model, USER) if isinstance(e, FinishEvent))
    assert finish_content.message["content"] is None  # tool-only answer: content is None, not ""


async def test_invalid_json_arguments_set_parse_error(write_script, collect):
    model = write_script(
        [
            {
                "tool_calls": [
                    {"id": "c1", "name": "bash", "arguments": '{"command": "ls'},
                    {"id": "c2", "name": "bash", "arguments": "[1, 2]"},
                ]
            }
        ]
    )
    calls = [e for e in await collect(model, USER) if isinstance(e, ToolCallEvent)]
    assert calls[0].arguments == {} and "not valid JSON" in (calls[0].parse_error or "")
    assert calls[0].raw_arguments == '{"command": "ls'
    assert calls[1].arguments == {} and "JSON object" in (calls[1].parse_error or "")
    finish_calls = (await collect(model, USER))[-1].message["tool_calls"]
    assert finish_calls[0]["function"]["arguments"] == '{"command": "ls', "raw text is stored as sent"


async def test_turn_is_chosen_by_assistant_message_count(write_script, collect):
    model = write_script([{"text": "first"}, {"text": "second"}])
    history = USER + [{"role": "assistant", "content": "first"}, {"role": "user", "content": "again"}]
    assert (await collect(model, USER))[-1].message["content"] == "first"
    assert (await collect(model, history))[-1].message["content"] == "second"
    exhausted = history + [{"role": "assistant", "content": "second"}, {"role": "user", "content": "more"}]
    events = await collect(model, exhausted)
    assert events[-1].message["content"] == scripted.EXHAUSTED_TEXT
    assert any(isinstance(e, UsageEvent) and e.prompt_tokens > 0 for e in events)


async def test_rate_limit_then_success_retries(write_script, collect, fast_backoff):
    model = write_script([{"text": "made it", "error": "rate_limit", "error_times": 2, "retry_after": 0}])
    events = await collect(model, USER, max_attempts=4)
    assert kinds(events)[:2] == [RetryEvent, RetryEvent]
    assert [e.delay_s for e in events[:2]] == [0.0, 0.0]
    assert events[-1].message["content"] == "made it"


@pytest.mark.parametrize(
    "kind, error_type",
    [
        ("auth", errors.AuthenticationError),
        ("not_found", errors.ModelNotFoundError),
        ("context_window", errors.ContextWindowExceededError),
        ("content_policy", errors.ContentRefusedError),
    ],
)
async def test_permanent_errors_are_typed_and_not_retried(write_script, collect, fast_backoff, kind, error_type):
    model = write_script([{"text": "never", "error": kind}])
    seen: list = []
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.stream import stream

    with pytest.raises(error_type) as info:
        async for event in stream(model, USER, None, CallSettings(max_attempts=4)):
            seen.append(event)
    assert seen == [], "no retry for a permanent error"
    assert model in info.value.message


@pytest.mark.parametrize(
    "kind, error_type",
    [
        ("server", errors.ServerError),
        ("timeout", errors.TimeoutError_),
        ("rate_limit", errors.RateLimitError),
    ],
)
async def test_transient_errors_exhaust_attempts(write_script, collect, fast_backoff, kind, error_type):
    model = write_script([{"error": kind}])
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.stream import stream

    seen: list = []
    with pytest.raises(error_type):
        async for event in stream(model, USER, None, CallSettings(max_attempts=3)):
            seen.append(event)
    assert kinds(seen) == [RetryEvent, RetryEvent]
    assert [e.attempt for e in seen] == [1, 2]


async def test_drop_mid_stream_is_interrupted_and_next_attempt_succeeds(write_script, collect, fast_backoff):
    model = write_script(
        [{"text": "a fairly long answer that will be cut", "error": "drop_mid_stream", "error_times": 1}]
    )
    with pytest.raises(errors.StreamInterruptedError):
        await collect(model, USER)
    events = await collect(model, USER)  # the user sends again: same turn, now complete
    assert events[-1].message["content"] == "a fairly long answer that will be cut"


async def test_missing_script_is_a_clear_error(tmp_path, collect):
    with pytest.raises(errors.ModelNotFoundError) as info:
        await collect(f"scripted/{tmp_path / 'nope.json'}", USER)
    assert "nope.json" in info.value.message


def test_script_validation_rejects_unknown_error_kind(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"turns": [{"error": "meteor"}]}))
    with pytest.raises(scripted.ScriptError, match="error must be one of"):
        scripted.load_script(path)


async def test_non_streaming_completion_through_litellm(write_script):
    import litellm

    from myrm_tui.llm.providers import ensure_providers_registered

    ensure_providers_registered()
    ensure_providers_registered()  # idempotent
    assert sum(1 for p in litellm.custom_provider_map if p["provider"] == "scripted") == 1
    model = write_script([{"text": "summary text", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}])
    response = await litellm.acompletion(model=model, messages=USER)
    assert response.choices[0].message.content == "summary text"
    assert response.usage.prompt_tokens == 10
