"""The compaction side panel: what the engine did to the context, and what it costs.

Sections: the compaction timeline, prompt-cache figures per model call with any cache breaks,
the stage circuit breakers from the latest report, and the summary DAG as a tree (active nodes
at the top level, folded children indented under the node that folded them). Built from stored
events and summary nodes, refreshed only when the screen says the context changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from myrm_tui.store.records import EventRecord
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.figures import metrics
from myrm_tui.tui.formatting import format_tokens, token_change

# Newest model calls listed in the cache section (older ones are in the health screen's totals).
CACHE_ROWS = 12


def _tok(value: int | None) -> str:
    return "?" if value is None else format_tokens(value)


def timeline_lines(events: Sequence[EventRecord]) -> list[str]:
    done = metrics.compactions(events)
    if not done:
        return ["no compactions yet"]
    lines = []
    for number, item in enumerate(done, 1):
        head = f"#{number} {item.tier} · {item.trigger}"
        if item.ms is not None:
            head += f" · {item.ms:.0f} ms"
        body = f"   {_tok(item.tokens_before)} → {_tok(item.tokens_after)}"
        if item.saved is not None:
            body += f" ({token_change(item.saved, _tok, short=True)})"
        if item.items is not None:
            body += f" · {item.items} msgs"
        lines += [head, body]
    return lines


# What the cache section says for a model whose registry entry has no prompt cache.
NO_PROMPT_CACHE = "this model has no prompt cache"


def cache_lines(events: Sequence[EventRecord], prompt_cache: bool = True) -> list[str]:
    """Per call: prompt, cached read and write; then the breaks. `prompt_cache` False (the model
    has none): one line saying so, not a column of "0 read (0%)" and breaks of a cache that is
    not there."""
    if not prompt_cache:
        return [NO_PROMPT_CACHE]
    calls = metrics.cache_calls(events)
    lines = []
    if not calls:
        lines.append("no model calls yet")
    first = max(0, len(calls) - CACHE_ROWS)
    for number, call in enumerate(calls[first:], first + 1):
        rate = "" if call.hit_rate is None else f" ({call.hit_rate * 100:.0f}%)"
        lines.append(
            f"#{number} {_tok(call.prompt_tokens)} prompt · {_tok(call.cached_read_tokens)} read{rate}"
            f" · {_tok(call.cached_write_tokens)} write"
        )
    spend = metrics.session_spend(events)
    if spend.cache_hit_rate is not None:
        lines.append(f"session hit rate {spend.cache_hit_rate * 100:.0f}%")
    breaks = metrics.cache_breaks(events)
    for found in breaks[-5:]:
        where = f" at msg {found.position}" if found.position is not None else ""
        of = f"/{found.previous_len}" if found.previous_len is not None else ""
        lines.append(f"⚠ cache break{where}{of}: {found.reason}")
    if not breaks and calls:
        lines.append("no cache breaks")
    # Phase-2 verdicts (context/cache_observer.py): breaks the prompt did not explain.
    unexpected = [e.data for e in events if e.kind == "cache_verdict" and e.data.get("kind") == "unexpected-break"]
    for verdict in unexpected[-3:]:
        lines.append(f"⚠ unexpected cache miss ({verdict.get('provider')}): {verdict.get('cause')}")
    return lines


def breaker_lines(events: Sequence[EventRecord]) -> list[str]:
    states = metrics.latest_breakers(events)
    if states is None:
        return ["not reported by this engine yet"]
    if not states:
        return ["all stages closed"]
    return [f"{stage}: {state}" for stage, state in sorted(states.items())]


def dag_lines(nodes: Sequence[dict]) -> list[str]:
    """The summary tree: each shown node (active or prepared) with its folded descendants
    indented under it; handle, depth, covered range, size, and how it was written."""
    by_handle = {n["handle"]: n for n in nodes}

    def line(node: dict, indent: int) -> list[str]:
        how = "extractive" if node["fallback"] else (node.get("model") or "model")
        state = "" if node["status"] == "active" else f" · {node['status']}"
        out = [
            f"{'  ' * indent}{node['handle']} d{node['depth']} · msg {node['first_id']}–{node['last_id']} "
            f"({node['covered_count']} msgs) · {_tok(node['tokens'])} · {how}{state}"
        ]
        for child in node.get("children") or ():
            if child in by_handle:
                out += line(by_handle[child], indent + 1)
        return out

    lines: list[str] = []
    for node in nodes:
        if node["status"] in ("active", "prepared"):
            lines += line(node, 0)
    return lines


class CompactionPanel(VerticalScroll):
    DEFAULT_CSS = sibling_css(__file__)

    def compose(self) -> ComposeResult:
        yield Static("Compactions", classes="title")
        yield Static("", id="timeline", classes="body")
        yield Static("Prompt cache", classes="title")
        yield Static("", id="cache", classes="body")
        yield Static("Circuit breakers", classes="title")
        yield Static("", id="breakers", classes="body")
        yield Static("Summary DAG", classes="title")
        yield Static("no summaries yet", id="dag", classes="body")

    def show_summaries(self, nodes: Sequence[dict]) -> None:
        self.query_one("#dag", Static).update(Content(for_terminal("\n".join(dag_lines(nodes)) or "no summaries yet")))

    def show_events(self, events: Sequence[EventRecord], prompt_cache: bool = True) -> None:
        events = sorted(events, key=lambda e: e.id)
        # Stored events and nodes quote model names and reasons: shown as data.
        self.query_one("#timeline", Static).update(Content(for_terminal("\n".join(timeline_lines(events)))))
        self.query_one("#cache", Static).update(Content(for_terminal("\n".join(cache_lines(events, prompt_cache)))))
        self.query_one("#breakers", Static).update(Content(for_terminal("\n".join(breaker_lines(events)))))

    def section_text(self, section: str) -> str:
        return str(self.query_one(f"#{section}", Static).content)
