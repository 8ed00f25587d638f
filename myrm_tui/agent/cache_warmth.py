"""Opt-in cache preheat and idle keep-alive (`cache_preheat`, `cache_keepalive` settings).

Why: a provider keeps a prompt prefix cached only for its TTL (context/window/config.py CACHE_TTL_S:
5 min Anthropic). A user who pauses longer comes back to a cold cache and the whole prefix is
billed again as a cache write (1.25× input on Anthropic) instead of a read (0.1×). A keep-alive
request, sent just before the TTL runs out, re-reads the prefix at 0.1× and restarts the TTL; a
preheat, sent when the prefix was rewritten (a compaction between turns) or a session starts,
pays the write while the user is still typing instead of on their next message.

Both are a request of the prompt the conversation would send, with `max_tokens=1`, through the
agent's own model call (`llm.stream`, or the stream function the agent was built with), so the
request is priced and stored as a USAGE event (with `purpose`) like any turn's and the TUI's cost
shows it. Keep-alive resends the last request byte for byte (a full cache hit by construction);
preheat assembles the prompt the next request starts with.

Cost against savings (docs/benchmarks.md, "Idle gaps"): each probe costs the prefix at the read
price; the avoided write saves the prefix at (write − read). So keep-alive pays off only for
pauses shorter than about (write − read) / read probes: ~11 probes ≈ 45 min at a 5-min TTL.
Hence the cap per idle period (`KEEPALIVE_MAX_PER_IDLE`), and both settings are off by default.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from myrm_tui.context.rows.family import provider_of
from myrm_tui.context.window.config import CACHE_TTL_S
from myrm_tui.llm.events import UsageEvent
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.agent.ports import WarmAgent

_log = logging.getLogger(__name__)

# A probe goes out this long before the TTL expires (the seed's "every 4 min" at a 5-min TTL):
# a margin for the request's own latency and for clock skew between us and the provider.
KEEPALIVE_MARGIN_S = 60.0
# At most this many probes per idle period (12 = one hour at a 5-min TTL). Past about 11 the
# probes cost more than the cache write they avoid (module docstring), so a longer pause is
# cheaper cold.
KEEPALIVE_MAX_PER_IDLE = 12
# One output token: the smallest answer every provider accepts (some refuse max_tokens=0).
PROBE_MAX_TOKENS = 1
PURPOSE_KEEPALIVE = "cache_keepalive"
PURPOSE_PREHEAT = "cache_preheat"
# The user turn a session-open preheat ends with (providers refuse a request of only a system
# prompt). It follows the marked system prompt, the prefix the first real request repeats, so
# only this stand-in is not read back from the cache.
PREHEAT_STAND_IN = "(cache preheat: no message yet)"


def cache_ttl_s(model: str) -> float:
    """The provider's prompt-cache lifetime for `model` (the engine's table)."""
    return float(CACHE_TTL_S.get(provider_of(model), CACHE_TTL_S["default"]))


def keepalive_times(
    last_call: float,
    until: float,
    ttl_s: float,
    *,
    margin_s: float = KEEPALIVE_MARGIN_S,
    cap: int = KEEPALIVE_MAX_PER_IDLE,
) -> list[float]:
    """When the probes of one idle period go out: each `ttl − margin` after the previous
    request, while the user has not come back (`until`), at most `cap`. The live keep-alive
    follows this schedule; the replay calls it with its virtual clock to simulate one."""
    step = max(1.0, ttl_s - margin_s)
    times: list[float] = []
    at = last_call + step
    while at < until and len(times) < cap:
        times.append(at)
        at += step
    return times


@dataclass(frozen=True)
class ProbeResult:
    """One preheat or keep-alive request: what it read from and wrote to the cache."""

    purpose: str
    prompt_tokens: int
    cached_read_tokens: int
    cached_write_tokens: int
    cost: float | None


class CacheWarmth:
    """Preheat and keep-alive for one agent. The caller drives it: `tick()` from a timer while
    the app is idle (tui), `preheat()` at session start and after a compaction between turns,
    `user_active()` when a message is sent (a new idle period, a new cap)."""

    def __init__(
        self,
        agent: WarmAgent,
        *,
        clock: Callable[[], float] | None = None,
        cap: int = KEEPALIVE_MAX_PER_IDLE,
        margin_s: float = KEEPALIVE_MARGIN_S,
    ):
        self.agent = agent
        # The engine's clock: `last_call_at` is on it, so "due" compares like with like.
        self.clock = clock or agent.engine.clock
        self.cap = cap
        self.margin_s = margin_s
        self.sent_this_idle = 0
        self.probes: list[ProbeResult] = []
        self._sending = False
        self._own_call_at: float | None = None  # when our last probe went out (engine clock)
        self._seen_compaction = 0  # the newest COMPACTION event id already answered by a request

    # -- keep-alive ---------------------------------------------------------------------
    @property
    def keepalive_enabled(self) -> bool:
        return bool(getattr(self.agent.settings, "cache_keepalive", False))

    def next_due(self) -> float | None:
        """When the next probe should go out, or None: setting off, a turn running, nothing
        sent yet (nothing cached to keep), or this idle period's cap reached."""
        if not self.keepalive_enabled or self.agent.busy or self._sending or not self._provider_caches():
            return None
        last = self.agent.engine.cache.last_call_at
        if last is not None and last != self._own_call_at:
            self.sent_this_idle = 0  # a real request since our last probe: a new idle period
        # Something to keep: this agent's last request, or (an agent built since the session's last
        # request: /model, a settings change) the conversation the next request starts with.
        has_prompt = self.agent.last_prompt is not None or self.agent.engine.last_row() is not None
        if last is None or not has_prompt or self.sent_this_idle >= self.cap:
            return None
        return float(last) + max(1.0, cache_ttl_s(self.agent.model_name) - self.margin_s)

    async def tick(self) -> ProbeResult | None:
        """Send a keep-alive when one is due, to this agent's model: the probe resends this agent's
        last request as it was; an agent with none yet was built since the session's last request
        (the TUI's driver hands over the agent the next message goes to, `ChatSession.next_agent`:
        after /model that is the new model), so the probe is the prompt the next request starts
        with, assembled for it: the old model's cache would be kept for nothing."""
        due = self.next_due()
        if due is None or self.clock() < due:
            return None
        prompt = self.agent.last_prompt
        if prompt is None:
            prompt = self.agent.engine.assemble(self.agent.turn_input())
            if not any(m.get("role") != "system" for m in prompt.messages):
                return None  # no conversation yet: the preheat's business, not the keep-alive's
        self.sent_this_idle += 1
        return await self._send(list(prompt.messages), prompt.tools, PURPOSE_KEEPALIVE)

    def user_active(self) -> None:
        """A message was sent: the idle period (and its cap) starts again after this turn.
        (`next_due` also notices a request it did not send itself.)"""
        self.sent_this_idle = 0

    async def step(self) -> ProbeResult | None:
        """One poll of an idle app: a preheat when a compaction rewrote the prefix since the
        last request, else a keep-alive when one is due."""
        if self.preheat_due():
            return await self.preheat()
        return await self.tick()

    # -- preheat ------------------------------------------------------------------------
    @property
    def preheat_enabled(self) -> bool:
        return bool(getattr(self.agent.settings, "cache_preheat", False))

    def preheat_due(self) -> bool:
        """A compaction between turns (/compact, the background `maintain`) rewrote the
        prefix after the last request: the next message would start from a cold cache."""
        if not self.preheat_enabled or self.agent.busy:
            return False
        latest = self._latest_compaction()
        if latest is None or latest.id <= self._seen_compaction:
            return False
        last = self.agent.engine.cache.last_call_at
        if last is not None and latest.created_at <= last:
            self._seen_compaction = latest.id  # a request went out after it already
            return False
        return True

    def _latest_compaction(self) -> Any:
        store, session = self.agent.store, self.agent.session_id
        events = store.events(session, kind=event_kinds.COMPACTION, after_id=self._seen_compaction)
        return events[-1] if events else None

    async def preheat(self, *, at_open: bool = False) -> ProbeResult | None:
        """Seed the cache with the prompt the next request starts with (session start, or the
        prefix rewritten by a compaction between turns). Skipped while a turn runs: its own
        request is about to write the cache anyway. `at_open`: the session has no message yet,
        so the system prompt and tools (the first request's marked prefix) go with a stand-in
        user turn."""
        if not self.preheat_enabled or self.agent.busy or self._sending or not self._provider_caches():
            return None
        latest = self._latest_compaction()
        prompt = self.agent.engine.assemble(self.agent.turn_input())
        if latest is not None:
            self._seen_compaction = latest.id  # this prompt is after it
        messages = list(prompt.messages)
        if not any(m.get("role") != "system" for m in messages):
            if not at_open:
                return None  # nothing to send after a compaction that left only the system prompt
            messages.append({"role": "user", "content": PREHEAT_STAND_IN})
        return await self._send(messages, prompt.tools, PURPOSE_PREHEAT)

    # -- the request --------------------------------------------------------------------
    def _provider_caches(self) -> bool:
        """Only a provider prompt cache expires with time: without one (or with the embedded
        model, whose KV cache stays in memory) a probe would be pure cost."""
        model = self.agent.build.model
        return bool(model.supports_prompt_caching) and not model.name.startswith("local/")

    async def _send(self, messages: list[dict[str, Any]], tools: Any, purpose: str) -> ProbeResult | None:
        from myrm_tui.agent.turn.model_stream import _closing, _default_stream

        agent = self.agent
        stream_fn = agent.stream_fn or _default_stream()
        settings = dataclasses.replace(
            agent.call_settings(), max_output_tokens=PROBE_MAX_TOKENS, reasoning_effort=None, max_attempts=1
        )
        usage: UsageEvent | None = None
        self._sending = True
        try:
            async with _closing(stream_fn(agent.model_name, messages, tools or None, settings)) as events:
                async for event in events:
                    if isinstance(event, UsageEvent):
                        usage = event
        except Exception:  # noqa: BLE001 - best effort: a failed probe only means a colder cache
            _log.info("cache %s request failed", purpose, exc_info=True)
            return None
        finally:
            self._sending = False
        agent.engine.note_provider_call()  # the cache is warm from now
        self._own_call_at = agent.engine.cache.last_call_at
        from myrm_tui.agent.reply_figures import priced

        usage = priced(usage or UsageEvent(), agent.build.model)
        agent.store.append_event(
            agent.session_id,
            event_kinds.USAGE,
            {"model": agent.model_name, "purpose": purpose, **dataclasses.asdict(usage)},
        )
        result = ProbeResult(
            purpose, usage.prompt_tokens, usage.cached_read_tokens, usage.cached_write_tokens, usage.cost
        )
        self.probes.append(result)
        return result


__all__ = [
    "KEEPALIVE_MARGIN_S",
    "KEEPALIVE_MAX_PER_IDLE",
    "PURPOSE_KEEPALIVE",
    "PREHEAT_STAND_IN",
    "PURPOSE_PREHEAT",
    "CacheWarmth",
    "ProbeResult",
    "cache_ttl_s",
    "keepalive_times",
]
