"""The context health screen: every figure `metrics.health_report` computes, in cards.

The report is computed in a thread (it reads all of the session's messages and events and
walks the vault folder), then shown; nothing here computes a number itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.figures.context_source import ModelBudget, read_context, with_budget
from myrm_tui.tui.figures.metrics import HealthReport, Metric, health_report, vault_size

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

CARDS = (
    ("context", "Context"),
    ("compaction", "Compaction"),
    ("cache", "Prompt cache"),
    ("engine", "Engine"),
    ("session", "Session"),
)
# Card columns by terminal width (health.tcss): three need about 36 columns each to keep a
# metric and its value on one line, so 80 columns get two and a narrow split pane one.
CARD_BREAKPOINTS = [(0, "-one-column"), (60, "-two-columns"), (110, "-three-columns")]


def instructions_line(workspace: Path | None) -> str:
    """The instruction files the system prompt carries (agent/setup/prompts.py), in its order, and what
    the shared cap did to them; one line under the cards."""
    if workspace is None:
        return "Instruction files: no workspace"
    from myrm_tui.agent.setup.prompts import current_instructions

    found = current_instructions(workspace)
    if not found.files:
        return "Instruction files: none (AGENTS.md / CLAUDE.md)"
    shown = []
    for item in found.files:
        size = (
            f"{item.chars:,} chars" if item.state == "whole" else f"{item.state}: {item.included:,} of {item.chars:,}"
        )
        shown.append(f"{item.label} ({size})")
    return "Instruction files: " + " · ".join(shown)


def card_content(metrics: list[Metric]) -> Content:
    parts: list[str | tuple[str, str]] = []
    for index, metric in enumerate(metrics):
        if index:
            parts.append("\n")
        parts += [(f"{metric.name}: ", "$text-muted"), (metric.value, "bold")]
        if metric.detail:
            parts += ["\n", (f"  {metric.detail}", "$text-muted")]
    return Content.assemble(*parts)


class HealthScreen(Screen[None]):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="health.close"),
        Binding("r", "refresh_report", "Refresh", id="health.refresh"),
    ]
    # Not ClassVar: Textual's own annotation (`ClassVar[...] | None`) reads as an instance attribute.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = CARD_BREAKPOINTS

    def __init__(self, store: Store, session_id: str | None, budget: ModelBudget | None = None) -> None:
        """`budget`: the session's current model's (context_source.with_budget), as the ring has it."""
        super().__init__()
        self.store = store
        self.session_id = session_id
        self.budget = budget
        self.report: HealthReport | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content("Context health"), id="health-title")
        # Scrolls: at 24 lines the cards are taller than the screen.
        with VerticalScroll(id="cards-scroll"), Grid(id="cards"):
            for key, title in CARDS:
                with Vertical(classes="card", id=f"card-{key}"):
                    yield Static(Content(title), classes="card-title")
                    yield Static(Content("…"), classes="card-body")
        # Read here, not in the report's thread: a few small files, and the line is there on the
        # first frame (no flicker from "…").
        yield Static(Content(for_terminal(self._instructions())), id="health-instructions")
        yield Static(Content("Esc close · r refresh"), id="health-hint")

    def on_mount(self) -> None:
        self.action_refresh_report()

    def action_refresh_report(self) -> None:
        if self.is_mounted:
            self.query_one("#health-instructions", Static).update(Content(for_terminal(self._instructions())))
        if self.session_id is None:
            self._show(health_report([], [], None))
            return
        self._compute()

    @work(thread=True, exclusive=True, group="health")
    def _compute(self) -> None:
        assert self.session_id is not None
        # The ring's own reading and the panel's own nodes: one set of numbers on every screen.
        report = health_report(
            self.store.messages(self.session_id),
            self.store.events(self.session_id),
            vault_size(self.store.vault.directory),
            reading=with_budget(read_context(self.store, self.session_id).reading, self.budget),
            summaries=self.store.summaries(self.session_id),
            prompt_cache=self.budget is None or self.budget.prompt_cache,
        )
        self.app.call_from_thread(self._show, report)

    def _instructions(self) -> str:
        return instructions_line(self.store.root.parent)

    def _show(self, report: HealthReport) -> None:
        self.report = report
        for key, _ in CARDS:
            body = self.query_one(f"#card-{key} > .card-body", Static)
            body.update(card_content(report.card(key)))

    def action_close(self) -> None:
        self.dismiss(None)
