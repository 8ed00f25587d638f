"""Terminal escape injection into the TUI, written as the attacker would do it (pilots).

The attacker controls a file in the workspace: what tools read and print, what the model
repeats (text, reasoning, notes), the arguments and even the tool names it sends, and the
session title (a prompt piped from a poisoned file by `myrm run -`). Each test checks two
things: the widget hands Textual the visible escape (`\\x1b]52;…`), and the text of every
segment Textual is about to write for the screen holds no control character at all.
test_tmux_escape_injection.py checks the same in a real terminal.
"""

from __future__ import annotations

import re

import pytest
from textual.widgets import Input, OptionList

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.dialogs import ConfirmScreen, InputScreen, TextScreen
from myrm_tui.tui.screens.fork import ForkScreen
from myrm_tui.tui.screens.sessions import SessionsScreen
from myrm_tui.tui.transcript.export_target import default_export_path
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.completion_popup import CompletionPopup
from tests.escape_attacks import ATTACKS, inert
from tests.tui.tui_pilot_helpers import notices, screen_text, scripted_settings, send, type_text, wait_until

PAYLOAD = "".join(ATTACKS.values())
OSC52 = "\\x1b]52;c;"  # how the clipboard write must look on screen
TITLE_ATTACK = "\x1b]0;pwned-title\x07\x9b2J\u202e fix the login bug"
SHOWN_TITLE = "\\x1b]0;pwned-title\\x07\\x9b2J\\u202e fix the login bug"
# Tall enough that the whole transcript of a test is on screen (headless: no real terminal).
BIG = (160, 120)


def shown(widget) -> str:
    """What a Static hands to Textual."""
    return str(widget.content)


def _flat(text: str) -> str:
    """Without whitespace and box drawing, so a phrase the screen wrapped still matches."""
    return re.sub(r"[\s\u2500-\u259f]", "", text)


def assert_shown(text: str, *visible: str) -> None:
    assert inert(text), [c for c in text if not inert(c)][:10]
    for piece in visible:
        assert _flat(piece) in _flat(text), (piece, text[-1500:])


@pytest.mark.slow
async def test_a_live_turn_shows_every_channel_as_text(workspace, store, script):
    (workspace / "notes.txt").write_text(f"Build notes {PAYLOAD} end of notes\n", encoding="utf-8")
    model = script(
        {
            "reasoning": f"thinking {PAYLOAD}",
            "text": f"Reading the notes {PAYLOAD}",
            "tool_calls": [
                {"id": "read", "name": "file_read", "arguments": {"path": "notes.txt"}},
                {"id": "note", "name": "session_note", "arguments": {"text": f"remember {PAYLOAD}"}},
                {"id": "evil", "name": f"evil{ATTACKS['OSC 2 window title (ST)']}", "arguments": {}},
                {"id": "cat", "name": "bash", "arguments": {"command": f"cat notes.txt; exit 3 # {PAYLOAD}"}},
            ],
        },
        {"text": f"The notes say {PAYLOAD} done.", "chunk_size": 1},
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=BIG) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "read the notes")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.query(ApprovalPrompt), what="approval")
        approval = screen.query_one(ApprovalPrompt)
        await pilot.pause(0.1)
        # the command the user is asked to allow is the command that runs: no hidden bytes
        assert_shown(shown(approval.query_one(".summary")), "cat notes.txt; exit 3 # " + OSC52, "\\u202e")
        assert_shown(screen_text(app), OSC52)
        await wait_until(pilot, lambda: approval.answerable, what="approval accepting answers")
        await pilot.press("ctrl+y", "y")  # move to the approval on purpose, then allow
        await wait_until(pilot, lambda: not screen.turn_running, what="turn end")
        replies = list(screen.query(AssistantMessage))
        await wait_until(pilot, lambda: all(not r.streaming for r in replies), what="final render")
        await pilot.pause(0.1)

        assert_shown(screen_text(app), OSC52, "\\x9b2J", "\\x1bP1$qm")
        for reply in replies:  # the model's text, streamed one character per delta in turn 2
            assert_shown(reply.markdown.source, OSC52, "\\x1b]8;;https://evil.example/", "\\u202e")
        assert_shown(shown(replies[0]._reasoning_view), "thinking " + OSC52)
        blocks = {b.call_id: b for b in screen.query(ToolBlock)}
        assert_shown(shown(blocks["read"]._output), "Build notes " + OSC52)  # the file's bytes
        assert_shown(shown(blocks["cat"]._output), "Build notes " + OSC52)  # a command's output
        assert_shown(shown(blocks["cat"]._header), "exit 3 # " + OSC52)  # the tool arguments
        assert_shown(shown(blocks["evil"]._header), "evil\\x1b]2;pwned-title\\x1b\\")  # a made-up name
        assert_shown(blocks["evil"].header_text(), "evil\\x1b]2;pwned-title")
        assert_shown(shown(approval.query_one(".outcome")), "allowed: bash cat notes.txt")
        # the store keeps the exact bytes: only the screen shows them as escapes
        sid = app.chat.session_id
        stored = [r.message.get("content") for r in store.messages(sid) if r.role == "assistant"]
        assert stored == [f"Reading the notes {PAYLOAD}", f"The notes say {PAYLOAD} done."]

        await type_text(pilot, "/notes")  # the model wrote a session note
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen), what="notes")
        await pilot.pause(0.1)
        assert_shown(screen_text(app), "remember " + OSC52)


@pytest.mark.slow
async def test_a_poisoned_session_title_is_text_everywhere_it_shows(workspace, store, script):
    model = script({"text": "unused"})
    # What `myrm run - < issue.txt` stores when the issue file starts with escape sequences.
    poisoned = store.create_session(model, TITLE_ATTACK)
    store.append_message(poisoned.id, {"role": "user", "content": TITLE_ATTACK}, 5)
    store.append_message(poisoned.id, {"role": "assistant", "content": f"Done {PAYLOAD}"}, 5)
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=BIG, notifications=True) as pilot:
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, what="list")
        await pilot.pause(0.1)
        row = str(app.screen.query_one(OptionList).get_option_at_index(0).prompt)
        assert_shown(row, SHOWN_TITLE[:30])
        assert_shown(screen_text(app), SHOWN_TITLE[:30])

        await pilot.press("d")  # the delete confirmation quotes the title
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.pause(0.1)
        assert_shown(screen_text(app), SHOWN_TITLE)
        await pilot.press("escape")

        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), what="back to the list")
        await pilot.press("r")  # the rename field starts from the title
        await wait_until(pilot, lambda: isinstance(app.screen, InputScreen), what="rename")
        await pilot.pause(0.1)
        assert_shown(app.screen.query_one(Input).value, SHOWN_TITLE)
        assert_shown(screen_text(app), "pwned-title")
        await pilot.press("escape")

        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), what="back to the list")
        await pilot.press("e")  # export to Markdown: a file someone will `cat`
        exported = default_export_path(poisoned.id)  # the config dir, never the workspace
        await wait_until(pilot, exported.exists, what="export")
        assert_shown(exported.read_text(encoding="utf-8"), "# " + SHOWN_TITLE, "Done " + OSC52)
        await pilot.press("enter")  # resume: the stored history is drawn from the store
        await wait_until(pilot, lambda: app.chat.session_id == poisoned.id, what="resumed")
        await wait_until(pilot, lambda: app.chat_screen.query(UserMessage), what="history")
        await pilot.pause(0.2)
        assert_shown(shown(app.chat_screen.query_one(UserMessage)), SHOWN_TITLE)
        assert_shown(screen_text(app), SHOWN_TITLE, "Done " + OSC52)

        await pilot.press("ctrl+n")  # the fork dialog names the session
        await wait_until(pilot, lambda: isinstance(app.screen, ForkScreen), what="fork dialog")
        await pilot.pause(0.1)
        assert_shown(screen_text(app), "Fork “" + SHOWN_TITLE)
        await pilot.press("escape")
    assert store.get_session(poisoned.id).title == TITLE_ATTACK  # nothing was rewritten


async def test_notes_notifications_dividers_and_the_status_line_show_text(workspace, store, script):
    model = script({"text": "ok"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=BIG, notifications=True) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "hello")
        note = Note(f"provider said {PAYLOAD}", "error", hint=f"hint {PAYLOAD}")
        divider = CompactionDivider(f"compacted {PAYLOAD}")
        await screen.transcript.mount(note)
        await screen.transcript.mount(divider)
        screen.status.set(state=f"running evil{ATTACKS['OSC 0 window title']}")
        app.notify(f"Export failed: {PAYLOAD}", title=f"title {ATTACKS['OSC 52 clipboard write']}", severity="error")
        await pilot.pause(0.2)
        assert_shown(shown(note), "provider said " + OSC52, "hint " + OSC52)
        assert_shown(shown(divider), "compacted " + OSC52)
        assert_shown(screen.status.plain(), "running evil\\x1b]0;pwned-title\\x07")
        assert_shown(notices(app)[-1], "Export failed: " + OSC52)
        assert_shown(
            screen_text(app),
            "provider said " + OSC52,
            "compacted " + OSC52,
            "Export failed: " + OSC52,
            "title " + OSC52,
        )


async def test_workspace_file_names_in_the_path_popup_show_as_text(workspace, store, script):
    """A cloned repository names its files: `@` lists them above the prompt."""
    (workspace / f"notes{ATTACKS['OSC 2 window title (ST)']}{ATTACKS['C1 8-bit CSI']}.txt").write_text("x")
    app = MyrmApp(workspace, scripted_settings(script({"text": "ok"})), store=store, watch_themes=False)
    async with app.run_test(size=BIG) as pilot:
        await type_text(pilot, "@notes")
        popup = app.chat_screen.query_one(CompletionPopup)
        await wait_until(pilot, lambda: popup.open, what="path popup")
        await pilot.pause(0.1)
        row = str(popup.get_option_at_index(0).prompt)
        assert_shown(row, "notes\\x1b]2;pwned-title\\x1b\\\\x9b2J.txt")
        assert_shown(screen_text(app), "notes\\x1b]2;pwned-title")


async def test_text_entering_the_prompt_from_a_paste_or_history_is_shown_escaped(workspace, store, script):
    """The editor draws its document raw, so a paste, a recalled poisoned prompt and a completion
    must arrive there as visible escapes (the sent message is what the user sees)."""
    from textual import events

    app = MyrmApp(workspace, scripted_settings(script({"text": "ok"})), store=store)
    async with app.run_test(size=BIG) as pilot:
        prompt = app.chat_screen.prompt
        app.post_message(events.Paste("pasted " + PAYLOAD))
        await wait_until(pilot, lambda: prompt.text.startswith("pasted"), what="paste")
        assert inert(prompt.text) and OSC52 in prompt.text
        prompt.load_text("")
        prompt.prompt_history.add("recalled " + PAYLOAD)
        await pilot.press("up")
        await wait_until(pilot, lambda: prompt.text.startswith("recalled"), what="history")
        assert inert(prompt.text) and OSC52 in prompt.text
        assert inert(screen_text(app))
