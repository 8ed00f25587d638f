"""The TUI's driver of the opt-in cache preheat / keep-alive (agent/cache_warmth.py).

Why a poll: the keep-alive is due a minute before the provider's cache TTL runs out after the
last request, and a preheat after a compaction between turns; a timer that looks every
`POLL_S` seconds is simpler than re-arming one-shot timers at every request, and costs nothing
while both settings are off (one attribute read). `myrm run` has no driver: it is one-shot and
its first request writes the cache anyway.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.screen import Screen

    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.cache_warmth import CacheWarmth
    from myrm_tui.tui.session.chat_session import ChatSession

# How late a probe may go out: well inside the one-minute margin before the TTL.
POLL_S = 15.0


class KeepAliveHost(Protocol):
    """What the driver reads of the app (`MyrmApp` has it). Why not the app's class: the app
    imports this module, so naming it here would make an import cycle (as for `app_host.py`)."""

    chat: ChatSession

    @property
    def chat_opened(self) -> bool: ...

    @property
    def screen(self) -> Screen[Any]: ...

    def set_interval(self, interval: float, callback: Callable[[], object]) -> object: ...

    def run_worker(self, work: Awaitable[object], *, group: str, exit_on_error: bool) -> object: ...


class CacheKeepAlive:
    def __init__(self, app: KeepAliveHost):
        self.app = app
        self._agent: Agent | None = None
        self._warmth: CacheWarmth | None = None

    def start(self) -> None:
        self.app.set_interval(POLL_S, self._poll)

    def _poll(self) -> None:
        if not self.app.chat_opened:
            return
        # The agent the next message goes to: after /model, the new model's (rebuilt now), so the
        # keep-alive warms the model the next request goes to, not the one the last went to.
        agent = self.app.chat.next_agent()
        if agent is None:
            return  # no request yet in this app: nothing cached to keep
        settings = agent.settings  # the build's: a settings change rebuilds the agent
        if not (getattr(settings, "cache_keepalive", False) or getattr(settings, "cache_preheat", False)):
            return
        screen = self.app.screen
        if getattr(screen, "turn_running", True) or getattr(screen, "compacting", False):
            return  # not the chat screen, or busy: the turn's own requests keep the cache warm
        if self._warmth is None or agent is not self._agent:
            from myrm_tui.agent.cache_warmth import CacheWarmth

            self._agent, self._warmth = agent, CacheWarmth(agent)
        self.app.run_worker(self._warmth.step(), group="cache-warmth", exit_on_error=False)
