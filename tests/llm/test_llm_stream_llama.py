"""stream() against the real llama.cpp OpenAI-compatible server, directly and through a
fault-injecting proxy: the error mapping and retry policy as a user would meet them."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from myrm_tui.llm import errors
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import FinishEvent, RetryEvent, TextDelta, UsageEvent
from myrm_tui.llm.stream import stream
from tests.llm.llm_test_support import DUMMY_API_KEY, free_port

pytestmark = pytest.mark.llama

HELLO = [{"role": "user", "content": "Say hello."}]


def settings(api_base: str, **fields: object) -> CallSettings:
    base: dict[str, Any] = {
        "api_base": api_base,
        "max_output_tokens": 12,
        "temperature": 0.0,
        "timeout_s": 30.0,
        "max_attempts": 2,
        "extra": {"api_key": DUMMY_API_KEY},
    }
    base.update(fields)
    return CallSettings(**base)


async def run(api_base: str, messages=HELLO, **fields: object) -> list:
    return [e async for e in stream("openai/smollm2", messages, None, settings(api_base, **fields))]


@pytest.mark.slow
async def test_streams_text_usage_and_finish(llama_server):
    events = await run(llama_server.api_base)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2, "a streamed answer arrives as several deltas"
    usage = [e for e in events if isinstance(e, UsageEvent)]
    assert len(usage) == 1 and usage[0].prompt_tokens > 0 and usage[0].completion_tokens > 0
    finish = events[-1]
    assert isinstance(finish, FinishEvent)
    assert finish.reason in ("stop", "length")
    assert finish.message == {"role": "assistant", "content": "".join(d.text for d in deltas)}
    assert finish.message["content"].strip()


async def test_wrong_port_is_network_unreachable_after_retries(fast_backoff):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    seen: list = []
    with pytest.raises(errors.NetworkUnreachableError) as info:
        async for event in stream("openai/smollm2", HELLO, None, settings(dead, max_attempts=2)):
            seen.append(event)
    assert [type(e) for e in seen] == [RetryEvent]
    assert seen[0].attempt == 1 and seen[0].max_attempts == 2
    assert "openai/smollm2" in info.value.message and dead in info.value.message
    assert DUMMY_API_KEY not in info.value.user_text()


async def test_rate_limit_twice_then_success(fault_proxy, fast_backoff):
    fault_proxy.plan = ["429", "429"]
    events = await run(fault_proxy.api_base, max_attempts=4)
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [r.attempt for r in retries] == [1, 2]
    assert all(r.delay_s == 0.0 for r in retries), "Retry-After: 0 is honoured"
    assert events.index(retries[-1]) < min(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert isinstance(events[-1], FinishEvent) and events[-1].message["content"]
    assert fault_proxy.requests == 3, "litellm's own retries are off: exactly one request per attempt"


async def test_rate_limit_forever_raises_rate_limit_error(fault_proxy, fast_backoff):
    fault_proxy.default = "429"
    seen: list = []
    with pytest.raises(errors.RateLimitError) as info:
        async for event in stream("openai/smollm2", HELLO, None, settings(fault_proxy.api_base, max_attempts=3)):
            seen.append(event)
    assert len(seen) == 2 and all(isinstance(e, RetryEvent) for e in seen)
    assert fault_proxy.requests == 3
    assert info.value.retry_after == 0.0
    assert "openai/smollm2" in info.value.message


async def test_connection_dropped_mid_stream_raises_interrupted(fault_proxy, fast_backoff):
    fault_proxy.default = "drop"
    fault_proxy.drop_after_events = 4
    seen: list = []
    with pytest.raises(errors.StreamInterruptedError):
        async for event in stream(
            "openai/smollm2", HELLO, None, settings(fault_proxy.api_base, max_output_tokens=40, max_attempts=3)
        ):
            seen.append(event)
    assert any(isinstance(e, TextDelta) for e in seen), "text had reached the consumer"
    assert not any(isinstance(e, (RetryEvent, FinishEvent)) for e in seen), "never retried after text"
    assert fault_proxy.requests == 1


async def test_auth_error_is_typed_and_does_not_leak_the_key(fault_proxy, fast_backoff):
    fault_proxy.default = "401"
    with pytest.raises(errors.AuthenticationError) as info:
        await run(fault_proxy.api_base, max_attempts=3)
    assert info.value.message == "openai/smollm2 rejected the API key."
    assert DUMMY_API_KEY not in info.value.user_text()
    assert fault_proxy.requests == 1, "not transient: no retry"


async def test_unknown_model_is_model_not_found(fault_proxy, fast_backoff):
    fault_proxy.default = "404"
    with pytest.raises(errors.ModelNotFoundError) as info:
        await run(fault_proxy.api_base)
    assert "openai/smollm2" in info.value.message
    assert fault_proxy.requests == 1


async def test_context_length_400_is_context_window_exceeded(fault_proxy, fast_backoff):
    fault_proxy.default = "400ctx"
    with pytest.raises(errors.ContextWindowExceededError) as info:
        await run(fault_proxy.api_base)
    assert "context window" in info.value.message
    assert fault_proxy.requests == 1


async def test_server_500_is_retried_then_server_error(fault_proxy, fast_backoff):
    fault_proxy.default = "500"
    with pytest.raises(errors.ServerError):
        await run(fault_proxy.api_base, max_attempts=2)
    assert fault_proxy.requests == 2


async def test_real_server_overflow_in_stream_is_an_error_not_an_empty_answer(llama_server, fast_backoff):
    # llama.cpp's server accepts the streamed request (HTTP 200) and then fails without a byte:
    # that must surface as an error, never as a silent empty assistant message.
    huge = [{"role": "user", "content": "word " * 6000}]
    with pytest.raises(errors.LLMError) as info:
        await run(llama_server.api_base, messages=huge, max_attempts=1)
    assert "empty response" in info.value.message


async def test_consumer_closing_mid_stream_releases_the_connection(llama_server):
    agen = stream("openai/smollm2", HELLO, None, settings(llama_server.api_base, max_output_tokens=64))
    assert isinstance(agen, AsyncGenerator)  # an async generator: the consumer may close it
    async for event in agen:
        if isinstance(event, TextDelta):
            break
    await agen.aclose()
    # The server is free for the next request right away (the abandoned one was closed, not leaked).
    events = await run(llama_server.api_base)
    assert isinstance(events[-1], FinishEvent)
