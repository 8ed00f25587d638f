"""Model calls to the user's own OpenAI-compatible server and to a hosted provider without its
key, through the real client stack (llm.stream -> litellm -> openai -> httpx) to a real HTTP
server on loopback.

Before: `openai/NAME` at a keyless local server with no OPENAI_API_KEY was refused by the
OpenAI client before sending anything, reported by litellm as "HTTP 500", retried four times
and shown as "openai failed on its side … send again in a moment".
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from myrm_tui.llm import errors
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import FinishEvent, RetryEvent
from myrm_tui.llm.stream import stream
from tests.faults.fake_openai_server import WIRES, FakeOpenAI, answer, error, running_fake_openai, use_wire

HELLO = [{"role": "user", "content": "hello"}]
ANTHROPIC_KEY = "sk-ant-real-key-of-another-provider-0001"
# What a keyless server sees (llm/endpoint_key.PLACEHOLDER_KEY): no secret, and says who sent it.
PLACEHOLDER_KEY = "myrm-no-key"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with running_fake_openai() as fake:
        yield fake


@pytest.fixture(autouse=True, params=WIRES)
def _no_openai_key(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, fast_backoff) -> None:
    use_wire(request.param, monkeypatch)  # myrm's own OpenAI-compatible client, and litellm's
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)  # a real key of another provider is set


async def _call(model: str, api_base: str | None, **fields) -> tuple[list, errors.LLMError | None]:
    seen: list = []
    try:
        async for event in stream(model, HELLO, None, CallSettings(api_base=api_base, max_attempts=4, **fields)):
            seen.append(event)
    except errors.LLMError as exc:
        return seen, exc
    return seen, None


async def test_a_keyless_local_server_gets_a_placeholder_and_never_another_providers_key(server: FakeOpenAI):
    server.default = answer("hi there")
    events, exc = await _call("openai/llama3", server.api_base)
    assert exc is None and any(isinstance(e, FinishEvent) for e in events)
    (request,) = server.requests
    assert request["authorization"] == f"Bearer {PLACEHOLDER_KEY}"
    assert ANTHROPIC_KEY not in request["authorization"] + request["body"]


async def test_a_hosted_model_without_its_key_fails_at_once_naming_the_variable(server: FakeOpenAI):
    events, exc = await _call("openai/gpt-4o", None)
    assert isinstance(exc, errors.AuthenticationError) and not exc.transient
    assert "OPENAI_API_KEY" in exc.user_text() and "HTTP 500" not in exc.user_text()
    assert not any(isinstance(e, RetryEvent) for e in events)
    assert server.requests == []


async def test_a_server_that_wants_a_key_says_which_variable_to_set(server: FakeOpenAI):
    server.default = error(401, "missing bearer token", type_="invalid_request_error")
    _events, exc = await _call("openai/llama3", server.api_base)
    assert isinstance(exc, errors.AuthenticationError)
    assert "OPENAI_API_KEY" in exc.user_text() and f"127.0.0.1:{server.port}" in exc.user_text()


async def test_errors_of_a_local_server_name_its_address_not_openai(server: FakeOpenAI, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-key-the-server-was-started-with-0004")
    server.default = error(500, "model crashed")
    _events, exc = await _call("openai/llama3", server.api_base, max_output_tokens=64)
    assert isinstance(exc, errors.ServerError)
    assert f"The server at 127.0.0.1:{server.port} failed" in exc.message
    assert "openai failed" not in exc.user_text() and "provider failed" not in exc.user_text()
