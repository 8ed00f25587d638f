"""Typing while the model works: Enter queues, the queue is shown, editable and cancellable, and
it goes as one message when the turn ends well (back to the prompt after an interrupt).

Each turn here waits on an approval, so "while the turn runs" is a fact of the test, not a race
against a timer."""

from __future__ import annotations

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.prompt.message_queue import QUEUE_JOIN, MessageQueue
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.queued_messages import QueuedMessages
from tests.tui.snapshot_helpers import SNAP_SIZE, make_app, seed, settle
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, type_text, wait_until


def _bash(call_id: str, command: str) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command}}]}


def _asks(store, session_id) -> list:
    return [r.message["content"] for r in store.messages(session_id) if r.role == "user"]


async def _busy_with_approval(pilot, app, text: str) -> ApprovalPrompt:
    await type_text(pilot, text)
    await pilot.press("enter")
    screen = app.chat_screen
    await wait_until(pilot, lambda: screen.query(ApprovalPrompt), what="approval")
    approval = screen.query_one(ApprovalPrompt)
    await wait_until(pilot, lambda: approval.answerable, what="approval accepting answers")
    return approval


async def _deny(pilot, screen) -> None:
    await pilot.press("ctrl+y")
    await wait_until(pilot, lambda: screen.focused is screen.pending_approval(), what="approval focus")
    await pilot.press("n")


async def _queue(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_a_message_queued_during_a_turn_is_sent_after_it(workspace, store, script):
    model = script(_bash("c1", "echo hi"), {"text": "not run"}, {"text": "answer to the queue"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _busy_with_approval(pilot, app, "run it")
        await _queue(pilot, "also check the logs")
        await _queue(pilot, "and the config")
        widget = screen.query_one(QueuedMessages)
        assert screen.prompt.text == "" and widget.display
        assert widget.shown == ("also check the logs", "and the config")
        assert "sent as one message when the turn ends" in str(widget.render())
        sid = app.chat.session_id
        assert _asks(store, sid) == ["run it"]  # nothing queued is stored yet
        await _deny(pilot, screen)
        await wait_until(pilot, lambda: screen.turns_ended >= 2, what="queued turn")
        assert _asks(store, sid) == ["run it", f"also check the logs{QUEUE_JOIN}and the config"]
        assert [r.message["content"] for r in store.messages(sid) if r.role == "assistant"][-1] == "answer to the queue"
        assert not widget.display and len(screen.queue) == 0
        assert [u.text for u in screen.query(UserMessage)][-1] == f"also check the logs{QUEUE_JOIN}and the config"


async def test_delete_cancels_and_up_recalls_the_last_queued_message(workspace, store, script):
    model = script(_bash("c1", "echo hi"), {"text": "not run"}, {"text": "answer to the queue"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await _busy_with_approval(pilot, app, "run it")
        await _queue(pilot, "keep me")
        await _queue(pilot, "drop me")
        await pilot.press("delete")
        assert screen.queue.items == ("keep me",)
        assert "Removed the last queued message." in notices(app)
        # Delete on a prompt with text is the editor's: the queue is untouched
        await type_text(pilot, "ab")
        await pilot.press("left", "delete")
        assert screen.prompt.text == "a" and screen.queue.items == ("keep me",)
        screen.prompt.clear()
        # Up on the empty prompt takes the last queued message back for editing
        await pilot.press("up")
        assert screen.prompt.text == "keep me" and len(screen.queue) == 0
        assert not screen.query_one(QueuedMessages).display
        await type_text(pilot, ", edited")
        await pilot.press("enter")
        assert screen.queue.items == ("keep me, edited",)
        await _deny(pilot, screen)
        await wait_until(pilot, lambda: screen.turns_ended >= 2, what="queued turn")
        assert _asks(store, app.chat.session_id) == ["run it", "keep me, edited"]


async def test_enter_keys_enter_faster_than_the_screen_queues_each_message_once(workspace, store, script):
    """A paste or tmux send-keys: the second Enter is read before the screen took the first
    message out of the editor, so its text still starts with the first one (seen in tmux)."""
    model = script(_bash("c1", "echo hi"), {"text": "not run"}, {"text": "answer to the queue"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _busy_with_approval(pilot, app, "run it")
        prompt = screen.prompt
        prompt.load_text("keep this one")
        prompt.move_cursor(prompt.document.end)
        prompt.action_submit()  # the order the prompt's queue sees: Enter, keys, Enter
        prompt.call_later(prompt.insert, "and this")
        prompt.action_submit()
        await wait_until(pilot, lambda: len(screen.queue) == 2, what="two queued")
        assert screen.queue.items == ("keep this one", "and this")
        assert prompt.text == ""


async def test_an_interrupt_gives_the_queue_back_to_the_prompt(workspace, store, script):
    model = script(_bash("c1", "echo hi"), {"text": "never"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _busy_with_approval(pilot, app, "run it")
        await _queue(pilot, "changed my mind")
        await type_text(pilot, "draft")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.turn_running, what="interrupt")
        await pilot.pause()
        assert screen.prompt.text == "draft\nchanged my mind"  # nothing typed is lost, nothing sent
        assert len(screen.queue) == 0 and not screen.query_one(QueuedMessages).display
        assert _asks(store, app.chat.session_id) == ["run it"]


async def test_slash_commands_still_run_during_a_turn(workspace, store, script):
    model = script(_bash("c1", "echo hi"), {"text": "not run"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _busy_with_approval(pilot, app, "run it")
        await _queue(pilot, "/notes")
        await wait_until(pilot, lambda: app.screen is not screen, what="notes screen")
        assert len(screen.queue) == 0


def test_the_queue_joins_in_order_and_empties():
    queue = MessageQueue()
    queue.add("a")
    queue.add("   ")
    queue.add("b")
    assert queue.items == ("a", "b")
    assert queue.pop_last() == "b"
    queue.add("c")
    assert queue.take_all() == f"a{QUEUE_JOIN}c" and len(queue) == 0 and queue.pop_last() is None


def test_snapshot_queued_messages_above_the_prompt(snap_compare, workspace, store):
    """Two queued messages and the keys that act on them, between the transcript and the prompt.
    (A snapshot cannot hold a running turn still, so the queue is filled as Enter would.)"""
    app = make_app(workspace, store, seed(store))

    async def queue_two(pilot):
        await settle(pilot)
        screen = pilot.app.chat_screen
        screen.queue.add("also run the linter")
        screen.queue.add("and explain why the last line was dropped in one sentence")
        screen.edits.show_queue()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=queue_two)
