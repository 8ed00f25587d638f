"""The provider's prompt cache as the engine sees it: when the last request went out, whether the
cache is still warm, what the next request should read from it and where a prompt broke it.

Why apart from the engine: the ladder asks whether the cache is warm (a warm cache is worth
protecting), the assemble names the first message that differs from the previous request (the
break and its reason) and predicts what the provider should read (phase 1); cache_observer.py
checks that prediction against the usage the provider reports (phase 2) and learns the TTL.
"""

from __future__ import annotations

from myrm_tui.context.cache_observer import CacheObserver, CachePrediction
from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.rows.family import provider_of
from myrm_tui.context.stages.cache_optimize import CacheBreak, first_difference, message_digest
from myrm_tui.context.window.config import CACHE_TTL_S
from myrm_tui.llm.models.info import ModelInfo


class CacheWatch:
    def __init__(self) -> None:
        self.last_call_at: float | None = None
        self.last_break: CacheBreak | None = None
        self.observer = CacheObserver()  # phase 2 of break detection; the learned TTL
        self.previous_digests: list[str] = []
        self._system_key: str | None = None
        self._system_hash = ""

    def warm(self, now: float, model: ModelInfo) -> bool:
        if self.last_call_at is None:
            return False
        if not model.supports_prompt_caching and not model.name.startswith("local/"):
            return False  # no provider cache to protect
        # The TTL learned from the provider's own cache reports (cache_observer), else the table's.
        ttl = self.observer.ttl(provider_of(model.name), CACHE_TTL_S)
        return now - self.last_call_at < ttl

    def predict(self, now: float, model: ModelInfo, found: CacheBreak | None) -> None:
        """Phase 1 of break detection: what this request should read from the provider's cache."""
        previous_len = len(self.previous_digests)
        if not previous_len or self.last_call_at is None:
            self.observer.predict(None)
            return
        share = 1.0 if found is None or found.position is None else found.position / previous_len
        prediction = CachePrediction(provider_of(model.name), now - self.last_call_at, self.warm(now, model), share)
        self.observer.predict(prediction)

    def system_digest(self, system_prompt: str) -> str:
        if self._system_key != system_prompt:
            self._system_key = system_prompt
            self._system_hash = message_digest({"role": "system", "content": system_prompt})
        return self._system_hash

    def detect_break(self, digests: list[str], event: CompactionEvent | None) -> CacheBreak | None:
        previous = self.previous_digests
        if not previous:
            return None
        position = first_difference(previous, digests)
        if position is None:
            return None
        if position == 0:
            reason = "system prompt changed (settings or model switch)"
        elif event is not None:
            reason = f"compaction ({event.tier}, {event.trigger})"
        else:
            reason = "history re-rendered (new turn changed reasoning/media of the previous one)"
        return CacheBreak(position, len(previous), reason, 0)
