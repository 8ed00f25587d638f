"""Opt-in model summary of a big unstructured tool output on arrival (`arrival_summary` setting).

Why: for a log, a build's chatter or a page of prose, no filter knows which lines matter, so the
plain excerpt is a head, a tail and the lines that look like errors. The seed's Layer 1.5 (L2)
sends such an output to a lightweight model instead, so the agent reads what happened in it.
The whole output goes to the vault first (the model's summary is a view, never the record), and
the stored result is the summary over the head and tail, under the usual spill marker with its
handle and the calls that read the rest.

Why opt-in: each such output costs an extra, uncached model call (the summarizer's, the lite
model when one is configured). Only unstructured output is sent: a shell compressor, a
declarative filter or a structural trimmer already keeps what matters, at no cost. What is sent
is redacted (secrets never leave for a second provider) and bounded (the generic excerpt fitted
to `INPUT_CHARS`); a timeout, an error or an empty answer keeps the plain excerpt.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from myrm_tui.context.filters.generic import head_tail
from myrm_tui.context.filters.smart import choose, filter_output
from myrm_tui.context.rows.ingest import spill_marker
from myrm_tui.llm.events import TextDelta, UsageEvent
from myrm_tui.redact import redact
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.agent.ports import SideCallAgent
    from myrm_tui.agent.setup.model_calls import SummaryRoute
    from myrm_tui.llm.models.info import ModelInfo
    from myrm_tui.settings.sections.output_filters import FilterSpec

_log = logging.getLogger(__name__)

# The seed's "single output > 5K tokens", at ~4 characters a token: smaller outputs keep the
# plain path (the arrival filter), where a model call would cost more than it saves.
MIN_CHARS = 20_000
# What the summarizer reads at most: the generic excerpt (head, tail, error lines) fitted to this.
# ~6k tokens: any lite model's window takes it, and the call stays cheap.
INPUT_CHARS = 24_000
# The summary's length cap, in output tokens: a paragraph or a short list.
SUMMARY_MAX_TOKENS = 400
# A summary later than this is not worth the wait: the plain excerpt goes instead.
TIMEOUT_S = 30.0
# Head and tail characters kept verbatim under the summary (the exact first and last lines).
HEAD_CHARS = 1_500
TAIL_CHARS = 1_500
# The tier the spill marker names ("… → model summary + head/tail excerpt shown").
KIND = "model summary + head/tail"
PURPOSE = "arrival_summary"
# Tools whose output the model asked for to read as it is: a summary would only make it read again
# (the seed's "read → truncate → re-read" loop); file reads keep their own, larger allowance.
EXEMPT_TOOLS = frozenset({"file_read"})

SYSTEM = (
    "You summarize one tool output for a coding agent that cannot see it whole. Say what the "
    "output shows: outcome, errors and warnings with their exact text, counts, names, paths and "
    "numbers that matter. No advice, no preamble. At most 12 short lines."
)


@dataclass(frozen=True)
class ArrivalSummary:
    """The stored text for one output, with the handle of the whole in the vault."""

    content: str
    handle: str
    full: str


def unstructured(content: str, tool: str, arguments: Mapping[str, Any], filters: Sequence[FilterSpec] = ()) -> bool:
    """True when no specialised filter (the session's declarative `filters` included)
    understands the output (the generic head/tail excerpt)."""
    lines = content.splitlines()
    return choose(content, lines, tool=tool, arguments=arguments, filters=filters).kind == head_tail([]).kind


def summary_input(content: str, tool: str, arguments: Mapping[str, Any], filters: Sequence[FilterSpec] = ()) -> str:
    """What the summarizer reads: the generic excerpt within INPUT_CHARS, secrets redacted."""
    fitted = filter_output(content, tool=tool, arguments=arguments, budget_chars=INPUT_CHARS, filters=filters)
    return redact(fitted.text if fitted is not None else content).text


def compose(content: str, summary: str, handle: str) -> str:
    """The stored result: marker (size, tier, handle, how to read the rest), summary, head, tail."""
    lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    head, tail = content[:HEAD_CHARS], content[-TAIL_CHARS:]
    return (
        f"{spill_marker(len(content), lines, handle, KIND)}\n"
        f"summary (by a model, of a redacted excerpt):\n{summary.strip()}\n"
        f"head:\n{head}\n[… {len(content) - len(head) - len(tail):,} chars in the vault …]\ntail:\n{tail}"
    )


async def summarize_result(
    agent: SideCallAgent, tool: str, arguments: Mapping[str, Any], content: str, handle: str | None
) -> ArrivalSummary | None:
    """The tool runner's hook: `content` as the tool returned it, `handle` when the tool already
    put the whole output in the vault (bash spills itself; its `content` is then the excerpt)."""
    if not getattr(agent.settings, "arrival_summary", False) or tool in EXEMPT_TOOLS:
        return None
    if handle is not None:
        try:
            content = agent.store.vault.read_text(handle)
        except Exception:  # noqa: BLE001 - an unreadable artifact: keep the tool's own excerpt
            return None
    return await summarize_arrival(agent, content, tool, arguments)


async def summarize_arrival(
    agent: SideCallAgent, content: str, tool: str, arguments: Mapping[str, Any]
) -> ArrivalSummary | None:
    """The model-summary result for `content`, or None (setting off, small, structured, no vault,
    no summarizer model, or the call failed: the caller keeps its plain path)."""
    vault = agent.store.vault
    if not getattr(agent.settings, "arrival_summary", False) or len(content) < MIN_CHARS or vault is None:
        return None
    filters = agent.settings.output_filters
    if not unstructured(content, tool, arguments, filters):
        return None
    routes = agent.summary_routes()
    if not routes:
        return None
    route = routes[0]
    messages = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Output of the `{tool}` tool:\n\n{summary_input(content, tool, arguments, filters)}",
        },
    ]
    try:
        text, usage = await asyncio.wait_for(_ask(agent, route, messages), TIMEOUT_S)
    except Exception:  # noqa: BLE001 - timeout, provider error: the plain excerpt is always there
        _log.info("arrival summary failed; the plain excerpt goes", exc_info=True)
        return None
    summary = redact(text).text.strip()  # the answer may echo what the excerpt had
    _record(agent, route.model, usage)
    if not summary:
        return None
    handle = vault.put(content, suffix=".txt")
    return ArrivalSummary(compose(content, summary, handle), handle, content)


async def _ask(
    agent: SideCallAgent, route: SummaryRoute, messages: list[dict[str, Any]]
) -> tuple[str, UsageEvent | None]:
    from myrm_tui.agent.turn.model_stream import _closing, _default_stream

    stream_fn = agent.stream_fn or _default_stream()
    settings = dataclasses.replace(route.settings, max_output_tokens=SUMMARY_MAX_TOKENS, max_attempts=1)
    parts: list[str] = []
    usage: UsageEvent | None = None
    async with _closing(stream_fn(route.model, messages, None, settings)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, UsageEvent):
                usage = event
    return "".join(parts), usage


def _record(agent: SideCallAgent, model: str, usage: UsageEvent | None) -> None:
    """Store the call's usage (with `purpose`) so the session's cost includes it."""
    from myrm_tui.agent.reply_figures import priced

    info = agent.build.model if model == agent.model_name else _model_info(agent, model)
    priced_usage = priced(usage or UsageEvent(), info)
    agent.store.append_event(
        agent.session_id,
        event_kinds.USAGE,
        {"model": model, "purpose": PURPOSE, **dataclasses.asdict(priced_usage)},
    )


def _model_info(agent: SideCallAgent, model: str) -> ModelInfo:
    from myrm_tui.llm.models import registry

    return registry.info(model, agent.settings.models)
