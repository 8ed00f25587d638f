"""The TUI's keep-alive driver (tui/session/cache_keepalive.py): it starts a warmth step only when an
agent exists, one of the settings is on, and nothing runs; the step itself is tested through the
agent in tests/agent/test_cache_warmth.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from myrm_tui.tui.session.cache_keepalive import POLL_S, CacheKeepAlive, KeepAliveHost


class FakeApp:
    def __init__(self, agent: Any, *, turn_running: bool = False, compacting: bool = False):
        self.chat_opened = True
        self.chat = SimpleNamespace(current_agent=agent)
        self.chat.next_agent = lambda: self.chat.current_agent  # no model change pending
        self.screen = SimpleNamespace(turn_running=turn_running, compacting=compacting)
        self.workers: list[Any] = []
        self.intervals: list[tuple[float, Any]] = []

    def set_interval(self, seconds: float, callback: Any) -> None:
        self.intervals.append((seconds, callback))

    def run_worker(self, work: Any, **options: Any) -> None:
        self.workers.append(work)
        work.close()  # a coroutine never awaited here


def _agent(**settings: Any) -> Any:
    values = {"cache_keepalive": False, "cache_preheat": False, **settings}
    return SimpleNamespace(settings=SimpleNamespace(**values), engine=SimpleNamespace(clock=lambda: 0.0))


@pytest.mark.parametrize(
    ("agent", "busy", "expected"),
    [
        (None, {}, 0),  # no request yet in this app
        (_agent(), {}, 0),  # both settings off
        (_agent(cache_keepalive=True), {"turn_running": True}, 0),
        (_agent(cache_keepalive=True), {"compacting": True}, 0),
        (_agent(cache_keepalive=True), {}, 1),
        (_agent(cache_preheat=True), {}, 1),
    ],
)
def test_the_driver_steps_only_when_on_and_idle(agent, busy, expected):
    app = FakeApp(agent, **busy)
    driver = CacheKeepAlive(cast(KeepAliveHost, app))
    driver.start()
    assert [seconds for seconds, _ in app.intervals] == [POLL_S]
    app.intervals[0][1]()
    assert len(app.workers) == expected


def test_the_driver_keeps_one_warmth_per_agent():
    agent = _agent(cache_keepalive=True)
    app = FakeApp(agent)
    driver = CacheKeepAlive(cast(KeepAliveHost, app))
    driver._poll()
    first = driver._warmth
    driver._poll()
    assert driver._warmth is first
    app.chat.current_agent = _agent(cache_keepalive=True)  # rebuilt (settings or model changed)
    driver._poll()
    assert driver._warmth is not None and driver._warmth is not first
    assert driver._warmth.agent is app.chat.current_agent
