"""The opt-in cache keep-alive and preheat (agent/cache_warmth.py), through a live agent on the
scripted provider with a fake clock: what is sent, when, how often, and never when off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.cache_warmth import (
    KEEPALIVE_MARGIN_S,
    PURPOSE_KEEPALIVE,
    PURPOSE_PREHEAT,
    CacheWarmth,
    cache_ttl_s,
    keepalive_times,
)
from myrm_tui.agent.session_parts import SessionParts
from myrm_tui.context.engine import ContextEngine
from myrm_tui.llm.events import TextDelta
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, settings_for

START = 1_000.0
USAGE = {"prompt_tokens": 900, "completion_tokens": 1, "cached_read_tokens": 850, "cached_write_tokens": 0}


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _agent(store, workspace: Path, script, clock: FakeClock, tmp_path: Path, **values) -> tuple[Agent, Path]:
    record = tmp_path / "requests.jsonl"
    model = script(
        {"text": "Done, the tests pass.", "usage": USAGE},
        {"text": "Second answer.", "usage": USAGE},
        record=str(record),
    )
    session = store.create_session(model=model)
    store.clock = clock
    parts = SessionParts(ContextEngine(store, session.id, clock=clock))  # the engine on the test's clock
    agent = Agent(
        store=store, session_id=session.id, settings=settings_for(model, **values), workspace=workspace, parts=parts
    )
    return agent, record


def _requests(record: Path) -> list[list[dict]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.open()]


async def test_keepalive_resends_the_last_request_just_before_the_ttl(store, workspace, script, clock, tmp_path):
    agent, record = _agent(store, workspace, script, clock, tmp_path, cache_keepalive=True)
    await drive(agent, "run the tests")
    warmth = CacheWarmth(agent)
    due = START + cache_ttl_s(agent.model_name) - KEEPALIVE_MARGIN_S
    assert warmth.next_due() == due

    clock.now = due - 1
    assert await warmth.tick() is None
    assert len(_requests(record)) == 1

    clock.now = due
    probe = await warmth.tick()
    assert probe is not None and probe.purpose == PURPOSE_KEEPALIVE
    requests = _requests(record)
    assert len(requests) == 2
    # Byte for byte the turn's request: the provider serves it all from the cache.
    assert json.dumps(requests[1], sort_keys=True) == json.dumps(requests[0], sort_keys=True)
    assert agent.engine.cache.last_call_at == due  # the engine counts the cache warm from the probe
    usage = [e.data for e in store.events(agent.session_id, kind=event_kinds.USAGE)]
    assert [u.get("purpose") for u in usage] == [None, PURPOSE_KEEPALIVE]
    assert usage[1]["cached_read_tokens"] == USAGE["cached_read_tokens"]

    # The next message's request starts with the probe's messages (same prefix, one more turn).
    clock.now = due + 100
    await drive(agent, "and now the docs")
    third = _requests(record)[2]
    assert json.dumps(third[: len(requests[1])], sort_keys=True) == json.dumps(requests[1], sort_keys=True)


async def test_keepalive_waits_while_a_turn_runs(store, workspace, script, clock, tmp_path):
    agent, record = _agent(store, workspace, script, clock, tmp_path, cache_keepalive=True)
    await drive(agent, "run the tests")
    warmth = CacheWarmth(agent)
    clock.now = START + 10 * cache_ttl_s(agent.model_name)
    turn = agent.turn("one more thing")
    async for event in turn:
        if isinstance(event, TextDelta):
            assert agent.busy
            assert warmth.next_due() is None
            assert await warmth.tick() is None
            break
    await turn.aclose()
    assert not any(u.data.get("purpose") for u in store.events(agent.session_id, kind=event_kinds.USAGE))
    assert len(_requests(record)) == 2  # the two turns' requests, no probe


async def test_keepalive_stops_at_the_cap_and_restarts_after_a_message(store, workspace, script, clock, tmp_path):
    agent, record = _agent(store, workspace, script, clock, tmp_path, cache_keepalive=True)
    await drive(agent, "run the tests")
    warmth = CacheWarmth(agent, cap=3)
    sent = 0
    for _ in range(10):  # an idle hour: a tick every 4 minutes, each one due
        due = warmth.next_due()
        if due is None:
            break
        clock.now = due
        sent += (await warmth.tick()) is not None
    assert sent == 3
    clock.now += 3600
    assert await warmth.tick() is None
    assert len(_requests(record)) == 4

    await drive(agent, "back again")  # a real request: a new idle period, a new cap
    assert warmth.next_due() is not None


async def test_never_sends_when_the_settings_are_off(store, workspace, script, clock, tmp_path):
    agent, record = _agent(store, workspace, script, clock, tmp_path)
    await drive(agent, "run the tests")
    warmth = CacheWarmth(agent)
    for step in range(1, 30):
        clock.now = START + step * 200
        assert await warmth.step() is None
    assert warmth.next_due() is None and not warmth.preheat_due()
    assert len(_requests(record)) == 1
    assert all(not e.data.get("purpose") for e in store.events(agent.session_id, kind=event_kinds.USAGE))


async def test_preheat_after_a_compaction_sends_the_new_prefix(store, workspace, script, clock, tmp_path):
    agent, record = _agent(store, workspace, script, clock, tmp_path, cache_preheat=True)
    warmth = CacheWarmth(agent)
    assert await warmth.preheat() is None  # a new session: only the system prompt, nothing to send
    await drive(agent, "run the tests")
    assert not warmth.preheat_due()
    clock.now = START + 30
    store.append_event(agent.session_id, event_kinds.COMPACTION, {"trigger": "manual"})
    assert warmth.preheat_due()
    probe = await warmth.step()
    assert probe is not None and probe.purpose == PURPOSE_PREHEAT
    sent = _requests(record)[-1]
    assert sent[-1]["role"] == "assistant" and "tests pass" in json.dumps(sent[-1])
    assert agent.engine.cache.last_call_at == START + 30
    assert not warmth.preheat_due()  # answered once


@given(
    last=st.floats(0, 1e6),
    pause=st.floats(0, 20_000),
    ttl=st.sampled_from([300.0, 600.0, 3600.0]),
    cap=st.integers(0, 20),
)
def test_keepalive_schedule_keeps_the_cache_warm_until_the_cap(last, pause, ttl, cap):
    until = last + pause
    times = keepalive_times(last, until, ttl, cap=cap)
    assert len(times) <= cap
    previous = last
    for at in times:
        assert previous < at < until
        assert at - previous < ttl  # each probe lands while the cache still holds the prefix
        previous = at
    if len(times) < cap:  # not capped: the user came back before the next probe was due
        assert until - previous <= ttl - KEEPALIVE_MARGIN_S + 1e-6


async def test_a_session_open_preheat_sends_the_prefix_the_first_message_then_sends(
    store, workspace, script, clock, tmp_path
):
    from myrm_tui.agent.cache_warmth import PREHEAT_STAND_IN
    from myrm_tui.agent.turn.model_stream import _default_stream

    sent: list[tuple[str, str]] = []  # (messages, tools) of each request, as JSON

    def recording(model, messages, tools, settings):
        sent.append((json.dumps(messages, sort_keys=True), json.dumps(tools, sort_keys=True)))
        return _default_stream()(model, messages, tools, settings)

    first_agent, _ = _agent(store, workspace, script, clock, tmp_path, cache_preheat=True)
    agent = Agent(
        store=store,
        session_id=first_agent.session_id,
        settings=first_agent.settings,
        workspace=workspace,
        stream_fn=recording,
    )
    probe = await CacheWarmth(agent).preheat(at_open=True)
    assert probe is not None and probe.purpose == PURPOSE_PREHEAT
    assert [e.data["purpose"] for e in store.events(agent.session_id, kind=event_kinds.USAGE)] == [PURPOSE_PREHEAT]
    await drive(agent, "run the tests")

    (pre_messages, pre_tools), (first_messages, first_tools) = sent
    pre, first = json.loads(pre_messages), json.loads(first_messages)
    assert [m["role"] for m in pre] == ["system", "user"] and pre[1]["content"] == PREHEAT_STAND_IN
    assert json.dumps(pre[0], sort_keys=True) == json.dumps(first[0], sort_keys=True), "the same system bytes"
    assert pre_tools == first_tools and json.loads(first_tools), "the same tools, in the same order"
    assert "run the tests" in json.dumps(first[-1]), "then the first message goes after the same prefix"


async def test_no_session_open_preheat_when_the_setting_is_off(store, workspace, script, clock, tmp_path):
    agent, record = _agent(store, workspace, script, clock, tmp_path)
    assert await CacheWarmth(agent).preheat(at_open=True) is None
    assert _requests(record) == [] and not store.events(agent.session_id, kind=event_kinds.USAGE)
