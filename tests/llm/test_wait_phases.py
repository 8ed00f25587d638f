"""What a call says it waits on before its first token (WaitPhase, for the chat's status line),
through `stream()` against a real OpenAI-compatible server on loopback.

What each test guards: with `report_waits` the call names the host it connects to, then the
wait for the first token once the response started, before any text; a caller that did not ask
(the summarizer, `myrm run`, the tests that compare event lists) gets the events it got before.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import TextDelta, WaitPhase
from myrm_tui.llm.stream import stream
from tests.faults.fake_openai_server import FakeOpenAI, running_fake_openai

HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with running_fake_openai() as fake:
        yield fake


async def _events(api_base: str, report_waits: bool) -> list[object]:
    settings = CallSettings(api_base=api_base, max_attempts=1, report_waits=report_waits)
    return [event async for event in stream("openai/qwen-local", HELLO, None, settings)]


async def test_a_call_names_the_host_then_the_wait_for_the_first_token(server: FakeOpenAI, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    events = await _events(server.api_base, report_waits=True)
    phases = [event.text for event in events if isinstance(event, WaitPhase)]
    assert phases == [f"connecting to 127.0.0.1:{server.port}", "waiting for the first token"]
    first_text = next(i for i, event in enumerate(events) if isinstance(event, TextDelta))
    assert all(isinstance(event, WaitPhase) for event in events[:2]) and first_text == 2


async def test_a_caller_that_did_not_ask_gets_no_phases(server: FakeOpenAI, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    events = await _events(server.api_base, report_waits=False)
    assert not [event for event in events if isinstance(event, WaitPhase)]
    assert "".join(event.text for event in events if isinstance(event, TextDelta)) == "ok"
