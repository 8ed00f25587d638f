"""Two-phase cache-break detection through a live agent on the scripted provider (which reports
the cache figures its script gives) with a fake clock: the stored verdicts and the learned TTL."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.session_parts import SessionParts
from myrm_tui.context.engine import ContextEngine
from myrm_tui.context.window.config import CACHE_TTL_S
from myrm_tui.store import event_kinds
from myrm_tui.tui.widgets.compaction_panel import cache_lines
from tests.agent.agent_helpers import drive, settings_for

START = 1_000.0
TABLE_TTL = CACHE_TTL_S["default"]  # `scripted/` models use the default provider's TTL


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def _usage(read: int, write: int) -> dict[str, int]:
    return {"prompt_tokens": 8_000, "completion_tokens": 5, "cached_read_tokens": read, "cached_write_tokens": write}


def _agent(store, workspace: Path, script, clock: FakeClock, *usages: dict[str, int]) -> Agent:
    model = script(*({"text": f"answer {i}", "usage": u} for i, u in enumerate(usages)))
    session = store.create_session(model=model)
    store.clock = clock
    parts = SessionParts(ContextEngine(store, session.id, clock=clock))  # the engine on the test's clock
    return Agent(store=store, session_id=session.id, settings=settings_for(model), workspace=workspace, parts=parts)


def _verdicts(store, agent: Agent) -> list[dict]:
    return [e.data for e in store.events(agent.session_id, kind=event_kinds.CACHE_VERDICT)]


async def test_a_warm_request_the_provider_did_not_cache_is_an_unexpected_break(store, workspace, script):
    clock = FakeClock()
    # The first call writes the cache; the second, 200 s later (warm by the table), reads nothing.
    agent = _agent(store, workspace, script, clock, _usage(0, 7_000), _usage(0, 8_000))
    await drive(agent, "first question")
    assert _verdicts(store, agent) == []  # the first call has nothing to compare against
    clock.now += 200.0
    await drive(agent, "second question")

    [verdict] = _verdicts(store, agent)
    assert verdict["kind"] == "unexpected-break"
    assert verdict["reported_tokens"] == 0 and verdict["expected_tokens"] == 8_000
    assert verdict["gap_s"] == pytest.approx(200.0)
    ttl = agent.engine.cache.observer.ttl("default", CACHE_TTL_S)
    assert 60.0 <= ttl < 200.0 < TABLE_TTL
    # The engine now calls the same gap cold.
    assert agent.engine.cache.last_call_at is not None
    assert not agent.engine.cache.warm(agent.engine.cache.last_call_at + 200.0, agent.build.model)
    assert any("unexpected cache miss" in line for line in cache_lines(store.events(agent.session_id)))


async def test_a_hit_after_a_long_gap_raises_the_ttl(store, workspace, script):
    clock = FakeClock()
    agent = _agent(store, workspace, script, clock, _usage(0, 7_000), _usage(7_500, 500))
    await drive(agent, "first question")
    clock.now += 1_200.0  # past the table's TTL: predicted cold
    await drive(agent, "second question")

    [verdict] = _verdicts(store, agent)
    assert verdict["kind"] == "unexpected-hit"
    assert agent.engine.cache.observer.ttl("default", CACHE_TTL_S) >= 1_200.0
    assert agent.engine.cache.last_call_at is not None
    assert agent.engine.cache.warm(agent.engine.cache.last_call_at + 1_000.0, agent.build.model)


async def test_a_provider_that_reports_no_cache_figures_teaches_nothing(store, workspace, script):
    clock = FakeClock()
    agent = _agent(store, workspace, script, clock, _usage(0, 0), _usage(0, 0), _usage(0, 0))
    for gap in (0.0, 200.0, 200.0):
        clock.now += gap
        await drive(agent, "question")
    assert _verdicts(store, agent) == []
    assert agent.engine.cache.observer.learned_ttl == {}
