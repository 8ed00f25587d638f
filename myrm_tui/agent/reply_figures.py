"""The figures of one model call, as the line under a reply shows them (no Textual).

Why a stored record of its own (`reply_figures` event, keyed by the assistant message id) and
not a join of `usage` events to messages by time: a reopened session must show the same line
the live turn showed, and the store's two id sequences (events, messages) say nothing about
which usage belongs to which reply. The agent writes it right after the reply is stored.

Cost: the provider's own figure when it sends one, else litellm's price map (ModelInfo); None
when neither knows the model (a local or custom model), never a made-up $0.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from myrm_tui.llm.events import UsageEvent

if TYPE_CHECKING:
    from myrm_tui.llm.models.info import ModelInfo
    from myrm_tui.store.store import Store

# Below this much decoding time a tokens/s figure is noise (one non-streamed chunk arrives in a
# few ms and would read as thousands of tokens per second); the whole call's time is used then.
MIN_DECODE_S = 0.05


@dataclass(frozen=True)
class ReplyFigures:
    """One model call: tokens in/out, the cached share of the prompt, cost, time."""

    message_id: int | None = None
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    cost: float | None = None
    elapsed_s: float | None = None  # request sent → last chunk
    first_token_s: float | None = None  # request sent → first text, thinking or tool call

    @property
    def cached_share(self) -> float | None:
        return self.cached_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    @property
    def tokens_per_s(self) -> float | None:
        """Output tokens over the decoding time (after the first token), the speed a reader feels."""
        if not self.completion_tokens or self.elapsed_s is None:
            return None
        decode = self.elapsed_s - (self.first_token_s or 0.0)
        seconds = decode if decode >= MIN_DECODE_S else self.elapsed_s
        return self.completion_tokens / seconds if seconds > 0 else None

    def as_data(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_read_tokens": self.cached_read_tokens,
            "cached_write_tokens": self.cached_write_tokens,
            "cost": self.cost,
            "elapsed_s": self.elapsed_s,
            "first_token_s": self.first_token_s,
        }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def figures_from_data(data: Mapping[str, Any]) -> ReplyFigures:
    """A stored `reply_figures` event back to figures; malformed fields read as unknown."""
    message_id = data.get("message_id")
    return ReplyFigures(
        message_id=message_id if isinstance(message_id, int) else None,
        model=str(data.get("model") or ""),
        prompt_tokens=_int(data.get("prompt_tokens")),
        completion_tokens=_int(data.get("completion_tokens")),
        cached_read_tokens=_int(data.get("cached_read_tokens")),
        cached_write_tokens=_int(data.get("cached_write_tokens")),
        cost=_float(data.get("cost")),
        elapsed_s=_float(data.get("elapsed_s")),
        first_token_s=_float(data.get("first_token_s")),
    )


def figures_by_message(events: Any) -> dict[int, ReplyFigures]:
    """message id → figures, from a session's stored events (the newest record wins)."""
    from myrm_tui.store import event_kinds

    out: dict[int, ReplyFigures] = {}
    for event in events:
        if event.kind == event_kinds.REPLY_FIGURES:
            figures = figures_from_data(event.data)
            if figures.message_id is not None:
                out[figures.message_id] = figures
    return out


def stored_figures(store: Store, session_id: str | None) -> dict[int, ReplyFigures]:
    """Figures of every reply in a session's history: its own events and, for a fork, its
    ancestors' (the replies it shares by reference were answered there)."""
    from myrm_tui.store import event_kinds

    out: dict[int, ReplyFigures] = {}
    seen: set[str] = set()
    while session_id and session_id not in seen:
        seen.add(session_id)
        for message_id, figures in figures_by_message(store.events(session_id, kind=event_kinds.REPLY_FIGURES)).items():
            out.setdefault(message_id, figures)
        session_id = store.get_session(session_id).parent_id
    return out


def priced(usage: UsageEvent, info: ModelInfo) -> UsageEvent:
    """`usage` with its cost filled from litellm's price map when the provider sent none."""
    if usage.cost is not None:
        return usage
    cost = call_cost(
        usage.prompt_tokens, usage.completion_tokens, usage.cached_read_tokens, usage.cached_write_tokens, info
    )
    return dataclasses.replace(usage, cost=cost)


def call_cost(
    prompt_tokens: int, completion_tokens: int, cached_read_tokens: int, cached_write_tokens: int, info: ModelInfo
) -> float | None:
    """The call's price from the model's per-token prices (litellm's map), None when unknown.

    Prompt counts include the cached tokens (OpenAI's shape, and litellm's for Anthropic), so
    cache reads and writes are priced at their own rates and taken out of the plain input;
    a model without a cache price pays the input price for them."""
    input_price = _float(getattr(info, "input_cost_per_token", 0.0)) or 0.0
    output_price = _float(getattr(info, "output_cost_per_token", 0.0)) or 0.0
    if input_price <= 0 and output_price <= 0:
        return None
    read_price = _float(getattr(info, "cache_read_cost_per_token", 0.0)) or input_price
    write_price = _float(getattr(info, "cache_write_cost_per_token", 0.0)) or input_price
    plain = max(0, prompt_tokens - cached_read_tokens - cached_write_tokens)
    return (
        plain * input_price
        + cached_read_tokens * read_price
        + cached_write_tokens * write_price
        + completion_tokens * output_price
    )
