"""The TUI ring's context health as ACP `usage_update`s, so an editor shows how full the context is.

Why `usage_update`: ACP has a session update for exactly this (tokens in context against the
window, and the session's cost), so editors draw it as their own context meter; myrm's figures the
protocol has no field for (the ring's percent, which is of the prompt limit, and the cache-hit
share) ride in its `_meta` under the `myrm` key, where a client that does not know them ignores
them.

Two updates per model call, as the ring moves twice: before the call (the engine's count of the
prompt being sent, measured against the limit of the assemble report the engine just stored) and
after it (the provider's own prompt count, its cache reads, the call's cost). The figures are the
ring's (`tui/figures/metrics.py` reads the same report and usage rows; acp does not import tui).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import Cost, UsageUpdate

from myrm_tui.context.assemble_report import AssembleReport
from myrm_tui.context.rows.json_fields import float_or_none
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.agent.events import StepStarted
    from myrm_tui.llm.events import UsageEvent
    from myrm_tui.store.store import Store

META_KEY = "myrm"  # ACP reserves `_meta` for extensions; one key of our own keeps ours apart
CURRENCY = "USD"  # the model registry prices calls in US dollars (llm/models, litellm's table)


class ContextHealth:
    """One session's ring: the window and prompt limit of the newest request, and the session's
    spend so far (the stored calls when the session was opened here, then each call's cost)."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.window = 0
        self.limit: int | None = None
        costs = [float_or_none(e.data.get("cost")) for e in store.events(session_id, event_kinds.USAGE)]
        known = [c for c in costs if c is not None]
        self.cost: float | None = sum(known) if known else None  # None: no call reported a cost

    def before_call(self, step: StepStarted, model_window: int) -> UsageUpdate:
        """The prompt about to be sent, against the budget the engine assembled it for."""
        latest = self.store.events(self.session_id, event_kinds.ASSEMBLE, limit=1)
        budget = AssembleReport.from_dict(latest[-1].data).budget if latest else None
        self.window = (budget.window if budget is not None else None) or model_window
        self.limit = budget.prompt_limit if budget is not None else None
        return self._update(step.prompt_tokens, cache_share=None)

    def after_call(self, usage: UsageEvent) -> UsageUpdate | None:
        """The provider's count of the prompt it was sent (None: it reported none, the engine's
        count stands), with its cache reads and the spend so far."""
        if usage.cost is not None:
            self.cost = (self.cost or 0.0) + usage.cost
        if usage.prompt_tokens <= 0:
            return None
        share = usage.cached_read_tokens / usage.prompt_tokens
        return self._update(usage.prompt_tokens, cache_share=round(min(1.0, max(0.0, share)), 4))

    def _update(self, used: int, *, cache_share: float | None) -> UsageUpdate:
        used = max(0, used)
        figures: dict[str, Any] = {}
        if self.limit:
            figures["promptLimit"] = self.limit
            figures["percent"] = round(used / self.limit * 100)  # the number inside the ring
        if cache_share is not None:
            figures["cacheHitShare"] = cache_share
        return UsageUpdate(
            session_update="usage_update",
            used=used,
            size=max(0, self.window),
            cost=Cost(amount=round(self.cost, 6), currency=CURRENCY) if self.cost is not None else None,
            field_meta={META_KEY: figures} if figures else None,
        )
