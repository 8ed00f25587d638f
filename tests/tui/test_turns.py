"""Pilots driving the real Agent with the scripted model: streaming, approvals, interrupt."""

from __future__ import annotations

import pytest
from textual.widgets import Collapsible

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

REPLY = (
    "Here is a **streamed** reply. It arrives in small pieces, and the transcript must show it "
    "growing while the model writes, then render it whole:\n\n- one\n- two\n\n```python\nprint('hi')\n```\n"
)


def _stored(store, session_id, role):
    return [r.message for r in store.messages(session_id) if r.message.get("role") == role]


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


def _idle(app) -> bool:
    return not app.chat_screen.turn_running


async def _answer(pilot, screen, approval, key: str) -> None:
    """Answer like a person: wait until the block accepts answers, move to it, press `key`."""
    await wait_until(pilot, lambda: approval.answerable, what="approval accepting answers")
    await pilot.press("ctrl+y")
    await wait_until(pilot, lambda: screen.focused is approval, what="approval focus")
    await pilot.press(key)


async def test_streamed_reply_appears_and_is_stored(workspace, store, script):
    # 46 chunks 40 ms apart: ~1.8 s of streaming, so a busy CI box that stalls the UI for a
    # moment (a first-message import, a GC pass) still shows a partial reply to the check below.
    model = script({"text": REPLY, "chunk_size": 4, "delay_ms": 40})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "hello there")
        # the user's words show at once and the input is cleared
        assert [u.text for u in screen.query(UserMessage)] == ["hello there"]
        assert screen.prompt.text == ""
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        # seen mid-stream: the Markdown holds a growing prefix of the reply, not all of it
        await wait_until(pilot, lambda: 0 < len(reply.markdown.source) < len(REPLY), what="partial reply")
        assert REPLY.startswith(reply.markdown.source)
        assert "streaming" in screen.status.plain() or "thinking" in screen.status.plain()
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        await wait_until(pilot, lambda: reply.markdown.source == REPLY and not reply.streaming, what="final render")
        assert reply.text == REPLY
        # the final render produced real Markdown blocks (a list and a code fence)
        block_names = {type(b).__name__ for b in reply.markdown.children}
        assert "MarkdownBulletList" in block_names and "MarkdownFence" in block_names
        # and the conversation is in the store
        sid = app.chat.session_id
        assert sid is not None and sid[:8] in screen.status.plain()
        assert [m["content"] for m in _stored(store, sid, "user")] == ["hello there"]
        assert [m["content"] for m in _stored(store, sid, "assistant")] == [REPLY]
        assert "ctx" in screen.status.plain()  # usage reached the status line


async def test_reasoning_is_folded_away(workspace, store, script):
    model = script({"text": "The answer is 4.", "reasoning": "two plus two is four", "chunk_size": 6})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "sum")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        reply = app.chat_screen.query_one(AssistantMessage)
        await wait_until(pilot, lambda: not reply.streaming, what="final render")
        assert reply.reasoning == "two plus two is four"
        box = reply.query_one(".reasoning", Collapsible)
        assert box.display and box.collapsed
        assert reply.markdown.source == "The answer is 4."


@pytest.mark.slow
async def test_approval_allow_then_deny(workspace, store, script):
    model = script(
        {"tool_calls": [{"id": "call_a", "name": "bash", "arguments": {"command": "echo approved-output"}}]},
        {"text": "It printed approved-output."},
        {"tool_calls": [{"id": "call_b", "name": "bash", "arguments": {"command": "echo never-run"}}]},
        {"text": "Understood, I did not run it."},
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "run it")
        await wait_until(pilot, lambda: screen.query(ApprovalPrompt), what="approval prompt")
        approval = screen.query_one(ApprovalPrompt)
        assert approval.request.summary and "echo approved-output" in approval.request.summary
        block = screen.query_one(ToolBlock)
        assert block.status == "pending" and "echo approved-output" in block.header_text()
        # the prompt sits right under its tool block
        children = list(screen.transcript.children)
        assert children.index(approval) == children.index(block) + 1
        # the keyboard stays in the input: y/n typed now are text, not answers
        assert screen.focused is screen.prompt
        await pilot.press("y", "n")
        assert approval.pending and screen.prompt.text == "yn"
        screen.prompt.clear()
        await _answer(pilot, screen, approval, "x")  # not an answer: nothing happens
        assert approval.pending and screen.prompt.text == ""
        await pilot.press("y")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert approval.decision is True and not approval.pending
        assert block.status == "ok" and "approved-output" in (block.content or "")
        assert "✓" in block.header_text() and not block.expanded
        assert screen.focused is screen.prompt  # keyboard back to the input
        await wait_until(
            pilot,
            lambda: any(r.text == "It printed approved-output." for r in screen.query(AssistantMessage)),
            what="reply",
        )

        await _send(pilot, "now another")
        await wait_until(pilot, lambda: len(screen.query(ApprovalPrompt)) == 2, what="second approval")
        second = list(screen.query(ApprovalPrompt))[1]
        await _answer(pilot, screen, second, "n")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        denied = next(b for b in screen.query(ToolBlock) if b.call_id == "call_b")
        assert second.decision is False
        assert denied.status == "denied" and "denied" in denied.header_text()
        tool_results = _stored(store, app.chat.session_id, "tool")
        assert [m["tool_call_id"] for m in tool_results] == ["call_a", "call_b"]
        assert "approved-output" in tool_results[0]["content"]
        assert tool_results[1]["content"].startswith("denied by user")


async def test_approval_answers_can_be_clicked(workspace, store, script):
    model = script(
        {"tool_calls": [{"id": "call_c", "name": "bash", "arguments": {"command": "echo via-button"}}]},
        {"text": "done"},
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "go")
        await wait_until(pilot, lambda: screen.query(ApprovalPrompt), what="approval prompt")
        approval = screen.query_one(ApprovalPrompt)
        await wait_until(pilot, lambda: approval.answerable, what="approval accepting answers")
        await pilot.click("#option-once")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert screen.query_one(ToolBlock).status == "ok"


async def test_failed_tool_block_opens_itself(workspace, store, script):
    model = script(
        {"tool_calls": [{"id": "call_f", "name": "bash", "arguments": {"command": "echo boom >&2; exit 3"}}]},
        {"text": "it failed"},
    )
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "fail")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        block = screen.query_one(ToolBlock)
        assert block.status == "error"
        assert block.expanded
        assert "boom" in (block.content or "")


async def test_interrupt_mid_stream_then_keep_chatting(workspace, store, script):
    slow = "word " * 200
    model = script({"text": slow, "chunk_size": 5, "delay_ms": 150})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "talk slowly")
        await wait_until(
            pilot,
            lambda: screen.query(AssistantMessage) and screen.query_one(AssistantMessage).text,
            what="first words",
        )
        # Enter while the turn runs queues the text (tests/tui/test_queue.py): shown, not sent
        await type_text(pilot, "queued")
        await pilot.press("enter")
        assert screen.prompt.text == "" and screen.queue.items == ("queued",)
        assert len(screen.query(UserMessage)) == 1
        await pilot.press("escape")
        await wait_until(pilot, lambda: _idle(app), timeout=10, what="interrupt")
        reply = screen.query_one(AssistantMessage)
        seen = reply.text
        assert 0 < len(seen) < len(slow)
        assert reply.has_class("-interrupted")
        notes = [n.text for n in screen.query(Note)]
        assert "interrupted" in notes
        # something was said, so the old prompt stays out; the queued text comes back, unsent
        assert screen.prompt.text == "queued"
        # what the user saw is kept in the store, marked as cut off
        sid = app.chat.session_id
        stored = _stored(store, sid, "assistant")
        assert len(stored) == 1 and stored[0]["content"].startswith(seen.rstrip()[:20])

        # the app is still usable: the next message gets a normal reply
        script({"text": "fast one"}, {"text": "fast two"}, {"text": "fast three"})
        screen.prompt.clear()
        await _send(pilot, "again")
        await wait_until(pilot, lambda: _idle(app) and len(screen.query(AssistantMessage)) == 2, what="second turn")
        second = list(screen.query(AssistantMessage))[1]
        await wait_until(pilot, lambda: not second.streaming, what="final render")
        assert second.text.startswith("fast")


async def test_interrupt_before_any_output_restores_the_prompt(workspace, store, script):
    model = script({"text": "too late", "chunk_size": 100, "delay_ms": 5000})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "please answer")
        await wait_until(pilot, lambda: "thinking" in screen.status.plain(), what="turn start")
        await pilot.press("escape")
        await wait_until(pilot, lambda: _idle(app), timeout=10, what="interrupt")
        assert screen.prompt.text == "please answer"
        assert not screen.query(AssistantMessage)
        assert "interrupted" in [n.text for n in screen.query(Note)]


async def test_interrupt_while_waiting_for_approval(workspace, store, script):
    model = script(
        {"tool_calls": [{"id": "call_w", "name": "bash", "arguments": {"command": "echo pending"}}]},
        {"text": "unused"},
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "run")
        await wait_until(pilot, lambda: screen.query(ApprovalPrompt), what="approval")
        await pilot.press("escape")
        await wait_until(pilot, lambda: _idle(app), timeout=10, what="interrupt")
        approval = screen.query_one(ApprovalPrompt)
        assert not approval.pending and approval.decision is None
        block = screen.query_one(ToolBlock)
        assert block.status == "interrupted"
        assert screen.focused is screen.prompt
        (result,) = _stored(store, app.chat.session_id, "tool")
        assert result["content"].startswith("interrupted by user")
        await pilot.press("y")  # a late key press neither decides nor crashes
        assert approval.decision is None


async def test_provider_error_shows_message_and_hint_and_keeps_the_text(workspace, store, script):
    model = script({"error": "auth"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "hello")
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        errors = [n for n in screen.query(Note) if n.level == "error"]
        assert errors and errors[0].hint
        assert screen.prompt.text == "hello"


async def test_live_bash_output_shows_while_running(workspace, store, script):
    model = script(
        {
            "tool_calls": [
                {
                    "id": "call_l",
                    "name": "bash",
                    "arguments": {"command": "echo first-line; sleep 1.5; echo second-line"},
                }
            ]
        },
        {"text": "done"},
    )
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "run")
        await wait_until(
            pilot,
            lambda: screen.query(ToolBlock) and "first-line" in screen.query_one(ToolBlock).live_text,
            what="live output",
        )
        block = screen.query_one(ToolBlock)
        live = block.query_one(".live")
        assert block.status == "running" and live.display
        assert "second-line" not in block.live_text
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        assert block.status == "ok" and not live.display
        assert "first-line" in block.content and "second-line" in block.content


async def test_scrolled_up_reader_is_not_pulled_down(workspace, store, script):
    long_reply = "\n\n".join(f"Paragraph {i} of a long streamed answer." for i in range(80))
    model = script({"text": long_reply, "chunk_size": 40, "delay_ms": 30})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=(80, 20)) as pilot:
        screen = app.chat_screen
        transcript = screen.transcript
        await _send(pilot, "long please")
        await wait_until(pilot, lambda: transcript.max_scroll_y > 5, what="overflowing transcript")
        # following: the view sits at the bottom while text streams in
        await wait_until(
            pilot,
            lambda: transcript.scroll_y >= transcript.max_scroll_y - 1 and transcript.max_scroll_y > 10,
            what="following",
        )
        transcript.scroll_home(animate=False)
        await pilot.pause(0.1)
        assert not transcript.following
        height_then = transcript.max_scroll_y
        await wait_until(pilot, lambda: transcript.max_scroll_y > height_then + 10, what="more text")
        assert transcript.scroll_y == 0  # still reading the top
        await wait_until(pilot, lambda: _idle(app), what="turn end")
        await pilot.press("ctrl+end")  # jump back: following again
        await pilot.pause(0.2)
        assert transcript.following
        assert transcript.scroll_y >= transcript.max_scroll_y - 1


async def test_quit_mid_command_records_the_interrupt_and_stops_the_process(workspace, store, script):
    import asyncio
    import secrets
    import time
    from pathlib import Path

    # The command is found from the host by a unique sleep duration: inside the bash sandbox it has
    # its own PID namespace, so a pid it reports about itself means nothing out here.
    token = f"{900 + secrets.randbelow(99)}.{secrets.randbelow(10**8):08d}"

    def running() -> bool:
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and token.encode() in (entry / "cmdline").read_bytes():
                    return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
            except OSError:
                continue
        return False

    model = script(
        {"tool_calls": [{"id": "call_q", "name": "bash", "arguments": {"command": f"echo started; sleep {token}"}}]},
        {"text": "unused"},
    )
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store)
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "run forever")
        await wait_until(
            pilot,
            lambda: screen.query(ToolBlock) and "started" in screen.query_one(ToolBlock).live_text,
            what="command running",
        )
        assert running()
        sid = app.chat.session_id
        await pilot.press("ctrl+q")
    assert time.monotonic() - started < 30
    (result,) = _stored(store, sid, "tool")
    assert result["content"].startswith("interrupted by user")
    deadline = time.monotonic() + 5
    while running() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not running(), "the command outlived the app"
