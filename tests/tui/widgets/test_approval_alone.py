"""The approval block arriving in a tiny host app while the user is typing, and answered by clicks.

tests/tui/test_approval_widget.py composes the block at start-up and answers it with keys; this
module covers what it does not: the block *mounting* in the middle of a message (the case that
once let the `y` of "yes please" approve a bash call) and the option rows used as buttons once
the guard has passed. As there, `guard_s` is 0 (answer at once) or FOREVER (the guard holds), so
nothing depends on how fast this machine is.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input

from myrm_tui.agent.events import ApprovalAnswer, ApprovalRequest
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from tests.tui.tui_pilot_helpers import type_text, wait_until

SIZE = (90, 40)
FOREVER = 3600.0  # a guard no test outlives


def request() -> ApprovalRequest:
    return ApprovalRequest(
        call_id="c1",
        tool="bash",
        arguments={"command": "rm -rf build"},
        summary="rm -rf build",
        cwd="/home/me/project",
        offered_rules=("Bash(rm -rf build)",),
    )


class HostApp(App[None]):
    """A draft Input standing in for the chat prompt, and the chat screen's Ctrl+Y."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+y", "arm", "Answer", priority=True)]

    def __init__(self, guard_s: float) -> None:
        super().__init__()
        self.guard_s = guard_s
        self.request = request()

    def compose(self) -> ComposeResult:
        yield Input(id="draft")

    def on_mount(self) -> None:
        self.request.decision = asyncio.get_running_loop().create_future()
        self.draft.focus()

    @property
    def decision(self) -> asyncio.Future[bool | ApprovalAnswer]:
        """The request's answer, a future made on mount."""
        assert self.request.decision is not None
        return self.request.decision

    @property
    def draft(self) -> Input:
        return self.query_one("#draft", Input)

    @property
    def approval(self) -> ApprovalPrompt:
        return self.query_one(ApprovalPrompt)

    def show_approval(self) -> None:
        self.mount(ApprovalPrompt(self.request, guard_s=self.guard_s), before=self.draft)

    def action_arm(self) -> None:
        self.approval.arm()


async def test_keys_typed_as_the_block_appears_mid_message_never_answer_it():
    app = HostApp(guard_s=FOREVER)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "yes please ")
        app.show_approval()
        # the next keys arrive while the block is being mounted: a letter, the focus key, more letters
        await pilot.press("y", "ctrl+y", "y", "a", "enter")
        await wait_until(pilot, lambda: app.approval.ignored_keys == 1, what="the focus key refused")
        assert app.draft.value == "yes please yya"
        assert app.focused is app.draft and not app.approval.armed
        assert not app.decision.done() and app.approval.pending


async def test_once_the_guard_has_passed_a_click_on_deny_denies():
    app = HostApp(guard_s=0.0)
    async with app.run_test(size=SIZE) as pilot:
        app.show_approval()
        await wait_until(pilot, lambda: app.query(ApprovalPrompt) and app.approval.answerable, what="the block")
        await pilot.click("#option-deny")
        await wait_until(pilot, lambda: app.decision.done(), what="an answer")
        assert app.decision.result() == ApprovalAnswer(False)
        await pilot.click("#option-once")  # a second click on a closed block changes nothing
        assert app.decision.result() == ApprovalAnswer(False) and app.approval.decision is False


async def test_a_click_on_always_allow_stores_the_offered_rule():
    app = HostApp(guard_s=0.0)
    async with app.run_test(size=SIZE) as pilot:
        app.show_approval()
        await wait_until(pilot, lambda: app.query(ApprovalPrompt) and app.approval.answerable, what="the block")
        await pilot.click("#option-always")
        await wait_until(pilot, lambda: app.decision.done(), what="an answer")
        assert app.decision.result() == ApprovalAnswer(True, remember=("Bash(rm -rf build)",))


async def test_a_click_on_deny_with_reason_takes_the_keyboard_for_the_reason_only():
    app = HostApp(guard_s=0.0)
    async with app.run_test(size=SIZE) as pilot:
        app.show_approval()
        await wait_until(pilot, lambda: app.query(ApprovalPrompt) and app.approval.answerable, what="the block")
        await pilot.click("#option-reason")
        box = app.approval.query_one(".reason", Input)
        await wait_until(pilot, lambda: app.focused is box, what="the reason box")
        await type_text(pilot, "yes, use make clean")  # `y` is text here
        assert not app.decision.done()
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.decision.done(), what="an answer")
        assert app.decision.result() == ApprovalAnswer(False, reason="yes, use make clean")
        assert app.draft.value == ""
