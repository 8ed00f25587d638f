"""The TUI's driver of the opt-in cache preheat / keep-alive (agent/cache_warmth.py).

Why a poll: the keep-alive is due a minute before the provider's cache TTL runs out after the
last request, and a preheat after a compaction between turns; a timer that looks every
`POLL_S` seconds is simpler than re-arming one-shot timers at every request, and costs nothing
while both settings are off (one attribute read). `myrm run` has no driver: it is one-shot and
its first request writes the cache anyway.
"""

from __future__ import annotations

from typing import Any

# How late a probe may go out: well inside the one-minute margin before the TTL.
POLL_S = 15.0


class CacheKeepAlive:
    def __init__(self, app: Any):
        self.app = app
        self._agent: Any = None
        self._warmth: Any = None

    def start(self) -> None:
        self.app.set_interval(POLL_S, self._poll)

    def _poll(self) -> None:
        if not getattr(self.app, "chat_opened", False):
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
        if agent is not self._agent:
            from myrm_tui.agent.cache_warmth import CacheWarmth

            self._agent, self._warmth = agent, CacheWarmth(agent)
        self.app.run_worker(self._warmth.step(), group="cache-warmth", exit_on_error=False)
