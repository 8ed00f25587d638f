"""The approval flow in the whole chat screen, with the real Agent and the scripted model.

What a user must be able to count on: an approval that appears while they type never takes their
keys; they answer only after moving to it (Ctrl+Y, remappable); "Always allow" stores exactly the
rule it showed and the next matching call runs without asking (a compound line still asks); a
denial's reason reaches the model; Esc stops the turn except inside the reason box.
"""

from __future__ import annotations

import json

import pytest
from textual.widgets import Static

from myrm_tui.agent.permissions.rules import rules_file
from myrm_tui.settings import Settings
from myrm_tui.settings.paths import user_config_dir
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from tests.tui.tui_pilot_helpers import SIZE, screen_text, scripted_settings, type_text, wait_until


def _bash(call_id: str, command: str) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command}}]}


def _tool_results(store, session_id) -> list[dict]:
    return [r.message for r in store.messages(session_id) if r.message.get("role") == "tool"]


def _idle(app) -> bool:
    return not app.chat_screen.turn_running


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def _waiting(pilot, screen, count: int = 1) -> ApprovalPrompt:
    await wait_until(pilot, lambda: len(screen.query(ApprovalPrompt)) >= count, what="approval")
    approval = list(screen.query(ApprovalPrompt))[count - 1]
    await wait_until(pilot, lambda: approval.answerable, what="approval accepting answers")
    return approval


async def _move_to(pilot, screen, approval: ApprovalPrompt, key: str = "ctrl+y") -> None:
    await pilot.press(key)
    await wait_until(pilot, lambda: screen.focused is approval, what="approval focus")


@pytest.mark.slow
async def test_an_approval_that_appears_mid_typing_takes_none_of_the_keys(workspace, store, script):
    model = script(_bash("call_t", "touch approved-marker"), {"text": "Not run, as you said."})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "make the marker")
        await type_text(pilot, "yes please")
        approval = await _waiting(pilot, screen)
        await type_text(pilot, " yes, y, n, a, r")  # every answer letter, typed after it appeared
        await pilot.press("up", "down")  # (Enter while busy would queue the draft: test_queue.py)
        assert approval.request.decision is not None
        assert approval.pending and not approval.request.decision.done()
        assert screen.focused is screen.prompt
        assert screen.prompt.text == "yes please yes, y, n, a, r"
        assert not (workspace / "approved-marker").exists()
        assert "Ctrl+Y to answer" in screen.status.plain()

        await _move_to(pilot, screen, approval)
        await pilot.press("n")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert not (workspace / "approved-marker").exists()
        assert screen.focused is screen.prompt  # the keyboard is back, the draft intact
        assert screen.prompt.text == "yes please yes, y, n, a, r"
        (result,) = _tool_results(store, app.chat.session_id)
        assert result["content"] == "denied by user: touch approved-marker"


async def test_the_focus_key_goes_back_to_the_draft_and_is_redo_when_nothing_waits(workspace, store, script):
    model = script(_bash("call_r", "echo hi"), {"text": "done"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "draft")
        await pilot.press("ctrl+z")
        assert screen.prompt.text == ""
        await pilot.press("ctrl+y")  # no approval waits: Ctrl+Y is the editor's redo
        assert screen.prompt.text == "draft"
        screen.prompt.clear()

        await _send(pilot, "run")
        approval = await _waiting(pilot, screen)
        await type_text(pilot, "abc")
        await _move_to(pilot, screen, approval)
        await pilot.press("ctrl+y")  # and back
        await wait_until(pilot, lambda: screen.focused is screen.prompt, what="back to the draft")
        assert not approval.armed and approval.pending
        await type_text(pilot, "yes")
        assert screen.prompt.text == "abcyes" and approval.pending
        await _move_to(pilot, screen, approval)
        await pilot.press("y")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert screen.query_one(ToolBlock).status == "ok"
        assert screen.prompt.text == "abcyes"


@pytest.mark.slow
async def test_a_denial_reason_is_stored_for_the_model_and_escape_in_the_box_goes_back(workspace, store, script):
    model = script(_bash("call_d", "rm notes.txt"), {"text": "Fine, I will use git rm."})
    (workspace / "notes.txt").write_text("keep me\n")
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "clean up")
        approval = await _waiting(pilot, screen)
        await _move_to(pilot, screen, approval)
        await pilot.press("r")
        await type_text(pilot, "use git rm so it is staged")
        await pilot.press("escape")  # inside the box: back to the answers, the turn goes on
        await wait_until(pilot, lambda: not approval.reason_open, what="box closed")
        assert screen.turn_running and approval.pending
        await pilot.press("r", "enter")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert (workspace / "notes.txt").exists()
        (result,) = _tool_results(store, app.chat.session_id)
        assert result["content"] == "denied by user: rm notes.txt. The user's reason: use git rm so it is staged"
        assert screen.query_one(ToolBlock).status == "denied"


async def test_escape_outside_the_box_stops_the_turn(workspace, store, script):
    model = script(_bash("call_e", "echo never"), {"text": "unused"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "go")
        approval = await _waiting(pilot, screen)
        await _move_to(pilot, screen, approval)
        await pilot.press("escape")
        await wait_until(pilot, lambda: _idle(app), what="interrupt")
        assert approval.decision is None and not approval.pending
        assert screen.focused is screen.prompt
        (result,) = _tool_results(store, app.chat.session_id)
        assert result["content"].startswith("interrupted by user")


@pytest.mark.slow
async def test_always_allow_stores_the_shown_rule_and_only_that_rule_skips_the_question(workspace, store, script):
    model = script(
        _bash("call_1", "echo hello-rule"),
        {"text": "ran it"},
        _bash("call_2", "echo hello-rule 2nd-run"),
        {"text": "ran it again"},
        _bash("call_3", "echo hello-rule && touch sneaky"),
        {"text": "not run"},
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "first")
        approval = await _waiting(pilot, screen)
        assert approval.request.offered_rules == ("Bash(echo hello-rule:*)",)
        await _move_to(pilot, screen, approval)
        await pilot.press("a")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        stored = json.loads(rules_file(user_config_dir()).read_text())
        assert stored["workspaces"][str(workspace.resolve())]["allow"] == ["Bash(echo hello-rule:*)"]
        assert any("always allowed in this workspace: Bash(echo hello-rule:*)" in n.text for n in screen.query(Note))

        await _send(pilot, "second")
        await wait_until(
            pilot, lambda: _idle(app) and len(_tool_results(store, app.chat.session_id)) == 2, what="second turn"
        )
        assert len(screen.query(ApprovalPrompt)) == 1  # ran without a question
        assert "hello-rule 2nd-run" in _tool_results(store, app.chat.session_id)[1]["content"]

        await _send(pilot, "third")
        third = await _waiting(pilot, screen, count=2)  # `&& touch sneaky` is not covered: it asks
        await _move_to(pilot, screen, third)
        await pilot.press("n")
        await wait_until(pilot, lambda: _idle(app), what="third turn")
        assert not (workspace / "sneaky").exists()


async def test_a_remapped_focus_key_is_the_one_shown_and_the_one_that_works(workspace, store, script):
    model = script(_bash("call_k", "echo remapped"), {"text": "done"})
    settings = Settings(keymap={"approval.focus": "f6"}).with_values(model=model, approval="ask")
    app = MyrmApp(workspace, settings, store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "go")
        approval = await _waiting(pilot, screen)
        assert "F6 to answer" in screen.status.plain()
        assert "F6 to answer" in str(approval.query_one(".hint", Static).content)
        await pilot.press("ctrl+y")
        assert screen.focused is screen.prompt and not approval.armed
        await _move_to(pilot, screen, approval, key="f6")
        await pilot.press("y")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert screen.query_one(ToolBlock).status == "ok"


async def test_at_80_columns_a_wrapped_command_keeps_the_whole_block_on_screen(workspace, store, script):
    # 74 characters: the length at which a block measured 2 columns wider than it is drawn (a
    # horizontal margin in the transcript's stream layout) would lose its last line: every line
    # it draws must lie inside it, down to the hint.
    command = "echo " + "w" * 69
    model = script(_bash("call_w", command), {"text": "done"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=(80, 30)) as pilot:
        screen = app.chat_screen
        await _send(pilot, "go")
        approval = await _waiting(pilot, screen)
        await pilot.pause(0.2)
        for child in approval.children:
            if child.display:
                assert child.region.bottom <= approval.region.bottom, child
        assert approval.region.bottom <= screen.transcript.region.bottom
        rows = screen_text(app).splitlines()
        assert any("Ctrl+Y to answer" in row for row in rows)
