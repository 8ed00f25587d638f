"""Inline yes/no for a tool call, inside the transcript (not a modal).

Inline because the user decides better while reading the conversation that led to the call,
and a modal would freeze scrolling. The widget resolves the agent's future directly; it is
the only place a decision is taken, so double presses and late presses (the turn was
interrupted meanwhile) are ignored here.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from myrm_tui.agent.events import ApprovalRequest
from myrm_tui.tui.constants import APPROVAL_DIFF_LINES
from myrm_tui.tui.css import sibling_css


def diff_content(diff: str, limit: int = APPROVAL_DIFF_LINES) -> Content:
    """A unified diff coloured by line kind, cut at `limit` lines."""
    lines = diff.splitlines()
    shown = lines[:limit]
    parts: list[Content] = []
    for line in shown:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        elif line.startswith("@@"):
            style = "$text-accent"
        else:
            style = "$text-muted"
        parts.append(Content.styled(line, style))
    if len(lines) > limit:
        parts.append(Content.styled(f"… {len(lines) - limit} more lines", "$text-muted"))
    return Content("\n").join(parts)


class ApprovalPrompt(Vertical, can_focus=True):
    """Shows what the tool will do; y allows, n denies (also as buttons)."""

    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide(True)", "Allow", id="approval.allow"),
        Binding("n", "decide(False)", "Deny", id="approval.deny"),
    ]

    class Shown(Message):
        """Mounted and waiting: the screen moves the keyboard focus here."""

    class Decided(Message):
        def __init__(self, prompt: ApprovalPrompt, allowed: bool | None) -> None:
            super().__init__()
            self.prompt = prompt
            self.allowed = allowed  # None: the turn ended before a decision

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="-destructive" if request.destructive else "")
        self.request = request
        self.decision: bool | None = None
        self.closed = False

    def compose(self) -> ComposeResult:
        title = f"Allow {self.request.tool}?"
        if self.request.destructive:
            title += "  (destructive)"
        yield Static(Content.styled(title, "bold"), classes="title")
        yield Static(Content(self.request.summary), classes="summary")
        if self.request.diff:
            yield Static(diff_content(self.request.diff), classes="diff")
        with Horizontal(classes="buttons"):
            yield Button("Allow (y)", id="allow", variant="success", compact=True)
            yield Button("Deny (n)", id="deny", variant="error", compact=True)
        yield Static("", classes="outcome")

    def on_mount(self) -> None:
        self.post_message(self.Shown())

    @property
    def pending(self) -> bool:
        return not self.closed

    def action_decide(self, allowed: bool) -> None:
        self.decide(allowed)

    @on(Button.Pressed, "#allow")
    def _allow(self, event: Button.Pressed) -> None:
        event.stop()
        self.decide(True)

    @on(Button.Pressed, "#deny")
    def _deny(self, event: Button.Pressed) -> None:
        event.stop()
        self.decide(False)

    def decide(self, allowed: bool) -> None:
        if self.closed:
            return
        future = self.request.decision
        if future is not None and not future.done():
            future.set_result(allowed)
        self.decision = allowed
        self._close("allowed" if allowed else "denied")
        self.post_message(self.Decided(self, allowed))

    def expire(self, reason: str = "interrupted") -> None:
        """The turn ended without a decision (interrupt, error): close without deciding."""
        if self.closed:
            return
        future: asyncio.Future[bool] | None = self.request.decision
        if future is not None and not future.done():
            future.cancel()
        self._close(reason)
        self.post_message(self.Decided(self, None))

    def _close(self, outcome: str) -> None:
        self.closed = True
        self.can_focus = False
        self.add_class(f"-{outcome}", "-closed")
        for button in self.query(Button):
            button.disabled = True
        glyph = {"allowed": "✓", "denied": "⊘"}.get(outcome, "■")
        self.query_one(".outcome", Static).update(
            Content(f"{glyph} {outcome}: {self.request.tool} {self.request.summary}"))
