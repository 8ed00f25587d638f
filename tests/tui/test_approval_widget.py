"""The approval block alone, in a small host app: what it shows, and that only deliberate keys answer.

The host has an Input standing in for the chat prompt (it holds the focus, as in the real app)
and a Ctrl+Y binding that arms the block like the chat screen does. `guard_s` is the block's
"too soon" window: 0 lets a test answer at once, a huge value proves the guard holds, so no test
depends on how fast this machine is.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input

from myrm_tui.agent.events import ApprovalAnswer, ApprovalRequest
from myrm_tui.tui.widgets.approval import ApprovalPrompt, OptionRow
from tests.tui.tui_pilot_helpers import screen_text, type_text, wait_until

NARROW = (80, 40)
FOREVER = 3600.0  # a guard no test outlives: every answer within it must be refused


def request_for(**fields) -> ApprovalRequest:
    values: dict[str, Any] = {
        "call_id": "c1",
        "tool": "bash",
        "arguments": {"command": "git status --short"},
        "summary": "git status --short",
        "cwd": "/home/me/project",
        "sandbox": "sandbox: writes only in the workspace and /tmp; no network",
        "offered_rules": ("Bash(git status:*)",),
    }
    values.update(fields)
    return ApprovalRequest(**values)


class Host(App):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+y", "arm", "Answer", priority=True, id="approval.focus")]

    def __init__(self, request: ApprovalRequest, guard_s: float = 0.0) -> None:
        super().__init__()
        self.request = request
        self.guard_s = guard_s

    def compose(self) -> ComposeResult:
        yield ApprovalPrompt(self.request, guard_s=self.guard_s)
        yield Input(id="draft")

    def on_mount(self) -> None:
        self.request.decision = asyncio.get_running_loop().create_future()
        self.query_one("#draft", Input).focus()

    @property
    def approval(self) -> ApprovalPrompt:
        return self.query_one(ApprovalPrompt)

    @property
    def decision(self) -> asyncio.Future[bool | ApprovalAnswer]:
        """The request's answer, a future made on mount."""
        assert self.request.decision is not None
        return self.request.decision

    @property
    def draft(self) -> Input:
        return self.query_one("#draft", Input)

    def action_arm(self) -> None:
        self.approval.arm()


def flat(text: str) -> str:
    """Without whitespace and the block's border glyphs, so a wrapped phrase still matches."""
    return re.sub(r"[\s\u2500-\u259f]", "", text)


async def settled(pilot, app: Host) -> str:
    """The screen once the block is laid out (its last line, the hint, is drawn)."""
    await wait_until(pilot, lambda: "to answer" in screen_text(app), what="the block drawn")
    return screen_text(app)


async def answered(pilot, app: Host) -> ApprovalAnswer:
    await wait_until(pilot, lambda: app.decision.done(), what="an answer")
    answer = app.decision.result()
    assert isinstance(answer, ApprovalAnswer), answer  # the block answers with more than yes/no
    return answer


async def test_the_block_shows_what_will_run_and_how_to_answer_at_80_columns():
    request = request_for(
        network_requested=True, summary="curl -sO https://x.test/a   [asks for network access]", offered_rules=()
    )
    app = Host(request)
    async with app.run_test(size=NARROW) as pilot:
        text = await settled(pilot, app)
        assert "Allow bash?" in text
        assert "curl -sO https://x.test/a" in text
        assert flat("in /home/me/project") in flat(text) and flat("no network") in flat(text)
        assert flat("asks for network access: allowing lets this one command reach the network") in flat(text)
        assert "Ctrl+Y to answer" in text and flat("what you type stays in your message") in flat(text)
        for label in ("y  Allow once", "n  Deny", "r  Deny with a reason for the model"):
            assert label in text
        assert "Always allow" not in text  # nothing offered: no such answer
        # every line of the block fits the 80-column terminal (nothing is cut at the edge)
        assert app.approval.region.right <= 80
        for row in app.approval.query(OptionRow):
            assert row.region.right <= 80


async def test_the_always_answer_names_the_exact_rule_it_stores():
    app = Host(request_for(offered_rules=("Bash(git status:*)", "Bash(git diff:*)")))
    async with app.run_test(size=NARROW) as pilot:
        assert flat("a  Always allow in this workspace: Bash(git status:*), Bash(git diff:*)") in flat(
            await settled(pilot, app)
        )


async def test_a_diff_and_a_destructive_reason_are_shown():
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old line\n+new line\n"
    app = Host(
        request_for(
            tool="file_edit", summary="edit x.py (line 1)", diff=diff, sandbox="", offered_rules=("Edit(x.py)",)
        )
    )
    async with app.run_test(size=NARROW) as pilot:
        text = await settled(pilot, app)
        assert "-old line" in text and "+new line" in text and "edit x.py (line 1)" in text
    danger = Host(
        request_for(
            arguments={"command": "rm -rf build"},
            summary="rm -rf build",
            destructive=True,
            why="destructive: recursive delete",
            offered_rules=(),
        )
    )
    async with danger.run_test(size=NARROW) as pilot:
        assert "Allow bash?  (destructive: recursive delete)" in await settled(pilot, danger)
        assert danger.approval.has_class("-destructive")


async def test_typed_letters_go_to_the_draft_never_to_the_block():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await type_text(pilot, "yes and no, really")
        await pilot.press("enter", "up", "down")
        assert app.draft.value == "yes and no, really"
        assert not app.decision.done() and app.approval.pending
        assert app.focused is app.draft


async def test_nothing_answers_within_the_guard_not_even_the_focus_key_or_a_click():
    app = Host(request_for(), guard_s=FOREVER)
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y")  # the deliberate key, but as the block appears
        assert app.focused is app.draft and not app.approval.armed
        await type_text(pilot, "yn")
        assert app.draft.value == "yn"
        await pilot.click("#option-once")
        await pilot.click("#option-always")
        assert not app.decision.done()
        assert app.approval.ignored_keys == 3
        assert flat("ignored: pressed as the question appeared") in flat(screen_text(app))


async def test_after_the_focus_key_y_allows_once():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: app.focused is app.approval, what="focus on the block")
        assert "↑↓ Enter or a letter" in screen_text(app)
        await pilot.press("x")  # not an answer: nothing happens
        assert not app.decision.done()
        await pilot.press("y")
        assert await answered(pilot, app) == ApprovalAnswer(True)
        assert app.approval.decision is True and not app.approval.pending
        await pilot.pause()
        assert "✓ allowed: bash git status --short" in screen_text(app)
        await pilot.press("n")  # a second answer changes nothing
        assert app.decision.result() == ApprovalAnswer(True)


async def test_always_allow_returns_the_offered_rules_and_is_absent_when_none_are_offered():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y", "a")
        assert await answered(pilot, app) == ApprovalAnswer(True, remember=("Bash(git status:*)",))
        await pilot.pause()
        assert "always allowed: bash git status --short  (Bash(git status:*))" in screen_text(app)
    bare = Host(request_for(offered_rules=()))
    async with bare.run_test(size=NARROW) as pilot:
        await settled(pilot, bare)
        await pilot.press("ctrl+y", "a")
        await pilot.pause()
        assert not bare.decision.done()  # `a` means nothing without an offer


async def test_arrows_and_enter_choose_and_n_denies():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y", "down", "down", "up", "up", "up")  # wraps to the last answer
        assert app.approval.choices[app.approval.selected].choice == "reason"
        await pilot.press("down", "down", "down", "enter")  # once -> always -> deny
        assert await answered(pilot, app) == ApprovalAnswer(False)
    plain = Host(request_for())
    async with plain.run_test(size=NARROW) as pilot:
        await settled(pilot, plain)
        await pilot.press("ctrl+y", "n")
        assert await answered(pilot, plain) == ApprovalAnswer(False)


async def test_deny_with_a_reason_sends_the_typed_line_and_escape_goes_back():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y", "r")
        box = app.approval.query_one(".reason", Input)
        await wait_until(pilot, lambda: app.focused is box, what="the reason box")
        await type_text(pilot, "yes I know")  # y and n are text here, not answers
        assert box.value == "yes I know" and not app.decision.done()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is app.approval, what="back to the answers")
        assert not box.display and app.approval.pending
        await pilot.press("r")
        await type_text(pilot, " use the make target instead")
        await pilot.press("enter")
        answer = await answered(pilot, app)
        assert answer.allow is False and answer.reason == "yes I know use the make target instead"
        await pilot.pause()
        assert flat("reason: yes I know use the make target instead") in flat(screen_text(app))


async def test_clicking_back_into_the_draft_disarms_the_block():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: app.focused is app.approval, what="focus on the block")
        await pilot.click("#draft")
        await wait_until(pilot, lambda: not app.approval.armed, what="the block disarmed")
        assert "Ctrl+Y to answer" in screen_text(app)
        await type_text(pilot, "yy")
        assert app.draft.value == "yy" and not app.decision.done()


async def test_expire_cancels_the_future_and_later_keys_do_nothing():
    app = Host(request_for())
    async with app.run_test(size=NARROW) as pilot:
        await settled(pilot, app)
        await pilot.press("ctrl+y")
        app.approval.expire("interrupted")
        await pilot.pause()
        assert app.decision.cancelled() and app.approval.decision is None
        await pilot.press("y")
        assert app.approval.decision is None
        assert "■ interrupted: bash git status --short" in screen_text(app)


async def test_a_hostile_command_is_shown_as_visible_escapes():
    command = "cat notes.txt # \x1b]52;c;cHduZWQ=\x07\u202e"
    app = Host(request_for(summary=command, arguments={"command": command}))
    async with app.run_test(size=NARROW) as pilot:
        text = await settled(pilot, app)
        assert "\\x1b]52;c;" in text and "\\u202e" in text
        assert "\x1b" not in text and "\u202e" not in text
