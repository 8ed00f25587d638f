"""Pilots that need no model call: resumed history, keymap, Ctrl+C, first paint."""

from __future__ import annotations

import sys

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.prompt import PromptArea
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until


def _seed_session(store, model: str) -> str:
    session = store.create_session(model, "earlier work")
    sid = session.id
    store.append_message(sid, {"role": "user", "content": "list the files please"}, 5)
    store.append_message(
        sid,
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls -a"}'}}
            ],
        },
        12,
    )
    store.append_message(sid, {"role": "tool", "tool_call_id": "call_1", "content": "README.md\nsrc"}, 4)
    store.append_message(sid, {"role": "assistant", "content": "There is a **README.md** and `src/`."}, 9)
    return sid


async def test_resume_renders_stored_history(workspace, store, script):
    model = script({"text": "unused"})
    sid = _seed_session(store, model)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid[:8], store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: len(screen.query(AssistantMessage)) == 2, what="history")
        users = [w.text for w in screen.query(UserMessage)]
        assert users == ["list the files please"]
        replies = list(screen.query(AssistantMessage))
        assert [r.text for r in replies] == ["Let me look.", "There is a **README.md** and `src/`."]
        await wait_until(pilot, lambda: replies[1].markdown.source == replies[1].text, what="markdown")
        (block,) = screen.query(ToolBlock)
        assert block.tool_name == "bash" and block.summary == "ls -a"
        assert block.status == "ok" and block.content == "README.md\nsrc"
        assert not block.expanded  # ok calls stay folded
        # the status line names the resumed session
        assert sid[:8] in screen.status.plain()
        # order in the transcript: user, reply, tool block, reply
        kinds = [type(w).__name__ for w in screen.transcript.children]
        assert kinds == ["UserMessage", "AssistantMessage", "ToolBlock", "AssistantMessage"]


async def test_continue_last_picks_latest_session(workspace, store, script):
    model = script({"text": "unused"})
    store.create_session(model, "old")
    sid = _seed_session(store, model)
    app = MyrmApp(workspace, scripted_settings(model), continue_last=True, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.chat_screen.query(UserMessage)) == 1, what="history")
        assert app.chat.session_id == sid


async def test_unknown_session_is_a_clear_error_not_a_crash(workspace, store, script):
    model = script({"text": "unused"})
    app = MyrmApp(workspace, scripted_settings(model), session_id="nope-nope", store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.query(Note), what="error note")
        (note,) = [n for n in app.chat_screen.query(Note) if n.level == "error"]
        assert "new session" in note.text
        assert app.chat.session is None


async def test_keymap_setting_rebinds_send(workspace, store, script):
    model = script({"text": "unused"})
    settings = scripted_settings(model)
    settings = Settings(settings.values, settings.models, {"prompt.submit": "ctrl+s"}, settings.sources)
    app = MyrmApp(workspace, settings, store=store)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.chat_screen.query_one(PromptArea)
        await type_text(pilot, "one")
        await pilot.press("enter")  # no longer sends: TextArea inserts a newline
        await type_text(pilot, "two")
        assert prompt.text == "one\ntwo"
        assert not app.chat_screen.query(UserMessage)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.chat_screen.query(UserMessage), what="sent message")
        assert app.chat_screen.query_one(UserMessage).text == "one\ntwo"
        assert prompt.text == ""


async def test_newline_keys_do_not_send(workspace, store, script):
    model = script({"text": "unused"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.chat_screen.query_one(PromptArea)
        await type_text(pilot, "a")
        await pilot.press("ctrl+j")
        await type_text(pilot, "b")
        await pilot.press("shift+enter")
        await type_text(pilot, "c")
        assert prompt.text == "a\nb\nc"
        assert not app.chat_screen.query(UserMessage)


def test_app_module_does_not_import_litellm():
    import subprocess

    code = "import sys, myrm_tui.tui.app; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_keys_arriving_in_one_burst_keep_their_order(workspace, store, script):
    """A paste without bracketed paste (or tmux send-keys) delivers text and Enter together."""
    from textual import events

    model = script({"text": "ok"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for key, char in [("a", "a"), ("b", "b"), ("ctrl+j", None), ("c", "c"), ("enter", "\r")]:
            app.post_message(events.Key(key, char))
        await wait_until(pilot, lambda: app.chat_screen.query(UserMessage), what="sent message")
        assert app.chat_screen.query_one(UserMessage).text == "ab\nc"
