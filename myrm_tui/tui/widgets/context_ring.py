"""The context health ring: how full the last request's prompt was, at a glance.

A two-cell braille ring, the percentage and a health dot (green, amber from 75 %, red from
90 %). It shows the *last request's* prompt against the prompt limit, never a running total
(which would keep growing after a compaction). The tooltip carries the details; a click asks
for a compaction. It only changes when the screen hands it a new state (a model call started,
usage arrived, a compaction ended), never per streamed token.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.figures.context_source import ContextState
from myrm_tui.tui.figures.glyphs import braille_ring

_LEVEL_STYLE = {"ok": "$text-success", "warn": "$text-warning", "crit": "$text-error", "unknown": "$text-muted"}


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def tooltip_text(state: ContextState, compact_key: str = "") -> str:
    """Every detail behind the ring, one fact per line; unknown facts are left out."""
    reading, spend, ladder = state.reading, state.spend, state.thresholds
    lines: list[str] = []
    if reading.used is None:
        lines.append("Context: no request yet in this session")
    else:
        percent = f" ({reading.percent}%)" if reading.percent is not None else ""
        what = {
            "parent": "the parent's last request (none in this fork yet)",
            "estimate": "estimated (no request in this fork yet)",
        }.get(reading.source, "last request")
        lines.append(f"Context: {_n(reading.used)} / {_n(reading.limit)} tokens{percent}, {what}")
        budget = []
        if reading.window is not None:
            budget.append(f"window {_n(reading.window)}")
        if reading.output_reserve is not None:
            budget.append(f"output reserve {_n(reading.output_reserve)}")
        if reading.safety_margin is not None:
            budget.append(f"margin {_n(reading.safety_margin)}")
        if budget:
            lines.append("  " + " · ".join(budget))
        if reading.fixed_tokens is not None:
            lines.append(f"  fixed prefix (system + tools): {_n(reading.fixed_tokens)}")
        if reading.history_tokens is not None:
            lines.append(f"  history: {_n(reading.history_tokens)}")
    steps = [
        (name, ratio)
        for name, ratio in (("light", ladder.light), ("full", ladder.full), ("emergency", ladder.emergency))
        if ratio
    ]
    if steps:
        lines.append("Auto-compact: " + " · ".join(f"{name} {ratio * 100:.0f}%" for name, ratio in steps))
    if reading.tier:
        deferred = f" (deferred: {reading.deferred})" if reading.deferred else ""
        lines.append(f"Engine tier: {reading.tier}{deferred}")
    if spend.calls:
        cost = f" · ${spend.cost:.4f}" if spend.cost is not None else ""
        calls = "1 call" if spend.calls == 1 else f"{spend.calls} calls"
        lines.append(f"Session spend: {_n(spend.total_tokens)} tokens over {calls}{cost}")
    lines.append(f"Click{f' or {compact_key}' if compact_key else ''}: compact now")
    return "\n".join(lines)


class ContextRing(Static):
    DEFAULT_CSS = sibling_css(__file__)
    ALLOW_SELECT = False

    class CompactRequested(Message):
        """The user clicked the ring."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.state = ContextState()
        self.compact_key = ""

    def on_mount(self) -> None:
        self._render_state()

    @property
    def level(self) -> str:
        return self.state.reading.level

    def show(self, state: ContextState) -> None:
        self.state = state
        if self.is_mounted:
            self._render_state()

    def label(self) -> str:
        """The ring as plain text (tests, screen readers)."""
        return self._content().plain

    def _content(self) -> Content:
        reading = self.state.reading
        level = reading.level
        style = _LEVEL_STYLE[level]
        percent = "--%" if reading.percent is None else f"{reading.percent}%"
        return Content.assemble(
            (braille_ring(reading.ratio), style if level != "unknown" else "$text-muted 40%"),
            " ",
            (percent, "bold" if level in ("warn", "crit") else ""),
            " ",
            ("●", style),
        )

    def _render_state(self) -> None:
        for level in _LEVEL_STYLE:
            self.set_class(level == self.level, f"-{level}")
        self.update(self._content())
        self.tooltip = tooltip_text(self.state, self.compact_key)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.CompactRequested())


class ForkHint(Static):
    """The call to action next to a filling ring: fork into a fresh session."""

    DEFAULT_CSS = sibling_css(__file__)  # scoped: only its own rules apply
    ALLOW_SELECT = False

    class ForkRequested(Message):
        """The user clicked the hint."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Content("⑂ fork"), id=id)
        self.display = False
        self.tooltip = "The context is filling up: continue in a fresh fork of this session."

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.ForkRequested())
