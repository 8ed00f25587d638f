"""llm_map's worker: one plain model call per item (no tools), on the model the map chose.

Why not a child agent: the item needs no tools, and a bare call costs the instruction, the item
and the answer, nothing else. Every call's usage is stored as a `usage` event with purpose
`llm_map`, so the session's cost includes the map.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from myrm_tui.agent.map.host import MapHost
from myrm_tui.agent.reply_figures import priced
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.errors import LLMError
from myrm_tui.llm.events import TextDelta, UsageEvent
from myrm_tui.llm.ports import StreamFn
from myrm_tui.store import event_kinds

PURPOSE = "llm_map"
# What one item's answer may be: a JSON record, not an essay. Bounds a runaway answer's cost.
ITEM_MAX_OUTPUT_TOKENS = 2_048


@dataclass(frozen=True)
class ModelRoute:
    """The model the items go to, how to call it, and its prices (for the cost cap)."""

    model: str
    settings: CallSettings
    info: Any  # llm.model_info.ModelInfo: per-token prices for `priced`
    note: str = ""  # said in the result when the choice differs from what was asked


@dataclass(frozen=True)
class Answer:
    text: str
    tokens: int = 0
    cost: float = 0.0
    error: str = ""


def route_for(host: MapHost, asked: str) -> ModelRoute:
    """`asked` is "lite", "main" or "" (the lite model when one is set, else the main one). Only
    the models the user configured are reachable: a map sends workspace text to the model, and
    the model must not pick a provider the user never chose."""
    from myrm_tui.llm.models import registry

    # The lite model as summaries resolve it (agent/setup/model_calls.py: configured, "off", or the
    # provider's small model chosen automatically, never one without a key): the summary chain's
    # first model when it is not the main one.
    routes = host.summary_routes()
    lite_route = routes[0] if routes and routes[0].model != host.model_name else None
    configured = str(host.settings.lite_model or "").strip()
    want_lite = asked == "lite" or (asked == "" and lite_route is not None)
    note = ""
    if want_lite and lite_route is not None:
        settings = dataclasses.replace(lite_route.settings, max_output_tokens=ITEM_MAX_OUTPUT_TOKENS)
        return ModelRoute(lite_route.model, settings, registry.info(lite_route.model, host.settings.models))
    if want_lite and configured and configured.lower() != "off":
        note = f"the lite model {configured} cannot take these calls here; the main model does"
    elif want_lite:
        note = "no lite model is in use (setting lite_model); the main model does"
    main = host.model_name
    settings = dataclasses.replace(host.call_settings(), max_output_tokens=ITEM_MAX_OUTPUT_TOKENS)
    return ModelRoute(main, settings, registry.info(main, host.settings.models), note)


def _default_stream() -> StreamFn:
    from myrm_tui.llm.stream import stream

    return stream


class ModelConversation:
    """One item's exchange: the map's system message, the item, the answer, maybe a retry."""

    def __init__(self, host: MapHost, route: ModelRoute, system: str):
        self.host = host
        self.route = route
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system}]

    async def ask(self, text: str) -> Answer:
        self.messages.append({"role": "user", "content": text})
        stream_fn = self.host.stream_fn or _default_stream()
        parts: list[str] = []
        usage = UsageEvent()
        events = stream_fn(self.route.model, list(self.messages), None, self.route.settings)
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, UsageEvent):
                    usage = event
        except LLMError as exc:
            return Answer("", error=f"the model call failed: {exc.message}")
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        text = "".join(parts)
        self.messages.append({"role": "assistant", "content": text})
        usage = priced(usage, self.route.info)
        self.host.store.append_event(
            self.host.session_id,
            event_kinds.USAGE,
            {"model": self.route.model, "purpose": PURPOSE, **dataclasses.asdict(usage)},
        )
        return Answer(text, usage.prompt_tokens + usage.completion_tokens, usage.cost or 0.0)

    async def aclose(self) -> None:
        return None
