"""Inline approval of a tool call, inside the transcript (not a modal), answered on purpose.

Why it never takes the keyboard by itself: it appears while the user may be typing, and a block
that grabbed focus on arrival let the `y` of "yes please" approve a bash call. So the prompt keeps
the keyboard; the block shows what will run (command or diff, where, what the sandbox allows,
a network request) and how to answer. The user moves to it with a deliberate key (binding
`approval.focus`, Ctrl+Y, on the chat screen) and picks an option with arrows and Enter or one
letter: allow once, always allow (the rule that would be stored is shown), deny, deny with a
reason for the model. Any key or click within APPROVAL_ANSWER_GUARD_S of the block appearing is
ignored, the focus key included. Esc keeps its one meaning, stopping the turn (the call does not
run); inside the reason box it goes back to the options.

Why inline: the user decides better while reading the conversation that led to the call, and a
modal would freeze scrolling. The widget resolves the agent's future itself; it is the only place
a decision is taken, so double presses and late presses (the turn was interrupted) are ignored.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from myrm_tui.agent.events import ApprovalAnswer, ApprovalRequest
from myrm_tui.agent.permissions.approvals import DENIAL_REASON_MAX_CHARS
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import APPROVAL_ANSWER_GUARD_S, APPROVAL_DIFF_LINES
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.formatting import pretty_key

# The chat screen's key that moves the keyboard to a waiting approval and back (binding id
# FOCUS_BINDING_ID; remappable from the user's own config only, like every `approval.*` id).
FOCUS_BINDING_ID = "approval.focus"
FOCUS_KEY = "ctrl+y"

ONCE, ALWAYS, DENY, REASON = "once", "always", "deny", "reason"


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
        parts.append(Content.styled(for_terminal(line), style))  # file contents are data
    if len(lines) > limit:
        parts.append(Content.styled(f"… {len(lines) - limit} more lines", "$text-muted"))
    return Content("\n").join(parts)


@dataclass(frozen=True)
class Choice:
    """One answer the block offers."""

    choice: str  # ONCE, ALWAYS, DENY, REASON
    binding_id: str
    label: str


class OptionRow(Static):
    """A clickable answer; clicks obey the same guard as keys."""

    def __init__(self, choice: Choice, text: Content) -> None:
        super().__init__(text, classes="option", id=f"option-{choice.choice}")
        self.choice = choice

    def on_click(self, event: events.Click) -> None:
        event.stop()
        prompt = next((a for a in self.ancestors if isinstance(a, ApprovalPrompt)), None)
        if prompt is not None:
            prompt.choose(self.choice.choice)


class ApprovalPrompt(Vertical):
    """What the tool will do, and the answers; keys act only after the user moved here."""

    DEFAULT_CSS = sibling_css(__file__)
    can_focus = False  # only once armed by the deliberate focus key (see arm)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('once')", "Allow once", id="approval.allow"),
        Binding("a", "choose('always')", "Always allow in this workspace", id="approval.always"),
        Binding("n", "choose('deny')", "Deny", id="approval.deny"),
        Binding("r", "choose('reason')", "Deny with a reason for the model", id="approval.deny_reason"),
        Binding("up", "move(-1)", "Previous answer", show=False, id="approval.previous"),
        Binding("down", "move(1)", "Next answer", show=False, id="approval.next"),
        Binding("enter", "choose_selected", "Choose the answer", show=False, id="approval.choose"),
        Binding("escape", "close_reason", "Back to the answers", show=False, id="approval.close_reason"),
    ]

    class Shown(Message):
        """Mounted and waiting (the screen updates the status line; it does not take focus)."""

        def __init__(self, prompt: ApprovalPrompt) -> None:
            super().__init__()
            self.prompt = prompt

    class Decided(Message):
        def __init__(self, prompt: ApprovalPrompt, allowed: bool | None) -> None:
            super().__init__()
            self.prompt = prompt
            self.allowed = allowed  # None: the turn ended before a decision

    def __init__(self, request: ApprovalRequest, *, guard_s: float = APPROVAL_ANSWER_GUARD_S) -> None:
        super().__init__(classes="-destructive" if request.destructive else "")
        self.request = request
        self.guard_s = guard_s
        self.decision: bool | None = None
        self.answer: ApprovalAnswer | None = None
        self.closed = False
        self.armed = False
        self.reason_open = False
        self.selected = 0
        self.ignored_keys = 0  # answers refused by the guard (shown, and read by tests)
        self._shown_at: float | None = None
        self.choices = self._choices()

    # -- what it shows -------------------------------------------------------------------------

    def _choices(self) -> list[Choice]:
        choices = [Choice(ONCE, "approval.allow", "Allow once")]
        if self.request.offered_rules:
            rules = ", ".join(self.request.offered_rules)
            choices.append(Choice(ALWAYS, "approval.always", f"Always allow in this workspace: {rules}"))
        choices += [
            Choice(DENY, "approval.deny", "Deny"),
            Choice(REASON, "approval.deny_reason", "Deny with a reason for the model…"),
        ]
        return choices

    def compose(self) -> ComposeResult:
        request = self.request
        title = f"Allow {request.tool}?"
        if request.destructive:
            title += f"  ({request.why or 'destructive'})"
        # What the user allows must read as what runs: escapes and bidi controls are shown.
        yield Static(Content.styled(for_terminal(title), "bold"), classes="title")
        yield Static(Content(for_terminal(request.summary)), classes="summary")
        where = f"in {request.cwd}" if request.cwd else ""
        if request.sandbox:
            where = f"{where} · {request.sandbox}" if where else request.sandbox
        if where:
            yield Static(Content(for_terminal(where)), classes="where")
        if request.network_requested:
            yield Static("asks for network access: allowing lets this one command reach the network", classes="network")
        if request.diff:
            yield Static(diff_content(request.diff), classes="diff")
        # Every line is drawn with its final text from the first frame, so the transcript that
        # follows the bottom sees the block's whole height at once (the hint is its last line).
        with Vertical(classes="options"):
            for index, choice in enumerate(self.choices):
                yield OptionRow(choice, self._option_text(index))
        yield Input(
            placeholder="why not? (sent to the model)",
            max_length=DENIAL_REASON_MAX_CHARS,
            select_on_focus=False,
            classes="reason",
            compact=True,
        )
        yield Static(self._hint_text(), classes="hint")
        yield Static("", classes="outcome")

    def on_mount(self) -> None:
        self._shown_at = time.monotonic()
        self.query_one(".reason", Input).display = False
        self.post_message(self.Shown(self))

    def _key(self, binding_id: str, default: str) -> str:
        keymap = getattr(self.app, "_keymap", {}) or {}
        key = keymap.get(binding_id, default).split(",")[0].strip()
        return key if len(key) == 1 else pretty_key(key)  # the letter as typed: y, not Y

    def _default_key(self, binding_id: str) -> str:
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                return binding.key
        return ""

    def _option_text(self, index: int) -> Content:
        choice = self.choices[index]
        key = self._key(choice.binding_id, self._default_key(choice.binding_id))
        marker = "›" if (self.armed and index == self.selected) else " "
        return Content(for_terminal(f"{marker} {key}  {choice.label}"))

    def _render_options(self) -> None:
        for index, row in enumerate(self.query(OptionRow)):
            row.set_class(self.armed and index == self.selected, "-selected")
            row.update(self._option_text(index))

    def _set_hint(self, text: str | None = None, warn: bool = False) -> None:
        hint = self.query_one(".hint", Static)
        hint.set_class(warn, "-warn")
        hint.update(self._hint_text() if text is None else text)

    def _hint_text(self) -> str:
        focus_key = self._key(FOCUS_BINDING_ID, FOCUS_KEY)
        if self.reason_open:
            return "Enter denies with this reason · Esc back to the answers"
        if self.armed:
            return f"↑↓ Enter or a letter · {focus_key} back to your message · Esc stops the turn"
        return f"{focus_key} to answer · what you type stays in your message"

    # -- state ---------------------------------------------------------------------------------

    @property
    def pending(self) -> bool:
        return not self.closed

    @property
    def answerable(self) -> bool:
        """Open, and long enough on screen that a key now was meant for it."""
        if self.closed or self._shown_at is None:
            return False
        return time.monotonic() - self._shown_at >= self.guard_s

    def _too_soon(self) -> None:
        self.ignored_keys += 1
        self._set_hint("ignored: pressed as the question appeared; read it, then press again", warn=True)

    def arm(self) -> bool:
        """The user moved here on purpose: take the keyboard. False (and a visible note) when it
        came too soon after the block appeared, or the block is closed."""
        if self.closed:
            return False
        if not self.answerable:
            self._too_soon()
            return False
        self.armed = True
        self.can_focus = True
        self.add_class("-armed")
        self._render_options()
        self._set_hint()
        self.focus(scroll_visible=True)
        self.scroll_visible()
        return True

    def disarm(self) -> None:
        """Back to showing only: the keyboard returns to the message (the screen moves it)."""
        self._hide_reason()
        self.armed = False
        self.can_focus = False
        self.remove_class("-armed")
        if not self.closed:
            self._render_options()
            self._set_hint()

    def on_blur(self) -> None:
        self.call_after_refresh(self._disarm_if_left)

    def on_descendant_blur(self) -> None:
        self.call_after_refresh(self._disarm_if_left)

    def _disarm_if_left(self) -> None:
        """The keyboard went elsewhere (a click in the message, Tab): the block stops taking keys."""
        if self.armed and not self.has_focus_within and self.is_attached:
            self.disarm()

    # -- keys ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_reason":
            return self.reason_open  # otherwise Esc is the screen's (stop the turn)
        if action in ("move", "choose_selected", "choose"):
            return self.armed and not self.closed and not self.reason_open
        return True

    def action_move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.choices)
        self._render_options()

    def action_choose_selected(self) -> None:
        self.choose(self.choices[self.selected].choice)

    def action_choose(self, choice: str) -> None:
        self.choose(choice)

    def action_close_reason(self) -> None:
        self._hide_reason()
        self.focus()
        self._set_hint()

    def choose(self, choice: str) -> None:
        """An answer from a key or a click; the guard applies to both."""
        if self.closed:
            return
        if not self.answerable:
            self._too_soon()
            return
        if choice == ONCE:
            self.decide(ApprovalAnswer(True))
        elif choice == ALWAYS and self.request.offered_rules:
            self.decide(ApprovalAnswer(True, remember=tuple(self.request.offered_rules)))
        elif choice == DENY:
            self.decide(ApprovalAnswer(False))
        elif choice == REASON:
            self._open_reason()

    def _open_reason(self) -> None:
        if not self.armed:  # a click while the keyboard is elsewhere: take it for the reason
            self.armed = True
            self.can_focus = True
            self.add_class("-armed")
        self.reason_open = True
        box = self.query_one(".reason", Input)
        box.display = True
        box.focus()
        self._set_hint()

    def _hide_reason(self) -> None:
        if self.reason_open:
            self.reason_open = False
            box = self.query_one(".reason", Input)
            box.display = False

    @on(Input.Submitted, ".reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        event.stop()
        self.decide(ApprovalAnswer(False, reason=event.value.strip()))

    # -- deciding ------------------------------------------------------------------------------

    def decide(self, answer: ApprovalAnswer | bool) -> None:
        if self.closed:
            return
        if not isinstance(answer, ApprovalAnswer):
            answer = ApprovalAnswer(bool(answer))
        future = self.request.decision
        if future is not None and not future.done():
            future.set_result(answer)
        self.answer = answer
        self.decision = answer.allow
        outcome = ("always allowed" if answer.remember else "allowed") if answer.allow else "denied"
        self._close("allowed" if answer.allow else "denied", outcome, answer)
        self.post_message(self.Decided(self, answer.allow))

    def expire(self, reason: str = "interrupted") -> None:
        """The turn ended without a decision (interrupt, error): close without deciding."""
        if self.closed:
            return
        future: asyncio.Future | None = self.request.decision
        if future is not None and not future.done():
            future.cancel()
        self._close(reason, reason, None)
        self.post_message(self.Decided(self, None))

    def _close(self, kind: str, outcome: str, answer: ApprovalAnswer | None) -> None:
        self.closed = True
        self._hide_reason()
        self.armed = False
        self.can_focus = False
        self.remove_class("-armed")
        self.add_class(f"-{kind}", "-closed")
        glyph = {"allowed": "✓", "denied": "⊘"}.get(kind, "■")
        line = f"{glyph} {outcome}: {self.request.tool} {self.request.summary}"
        if answer is not None and answer.remember:
            line += f"  ({', '.join(answer.remember)})"
        if answer is not None and answer.reason:
            line += f"  — reason: {answer.reason}"
        self.query_one(".outcome", Static).update(Content(for_terminal(line)))
