"""The chat's keyboard model (screens/chat_keys.py), driven by keys as a user presses them.

What a careful new user hit: Tab to a tool block, `o`, Esc, then type a message and Enter: nothing
was sent and the text was gone. Getting back to the message took several Tabs, Tab began at the
oldest block and jumped the view to the top, and PageUp/PageDown in the message did not scroll.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widget import Widget

from myrm_tui.store.tool_status import OK, STATUS_KEY
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.tool_output import ToolOutputScreen
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock, ToolHeader
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until


def focus_of(screen: Screen) -> Widget | None:
    """What has the focus now, read afresh (a key press moves it)."""
    return screen.focused


TURNS = 12  # each with a tool call and an answer: far taller than the 40-row screen


def seed_tool_turns(store, model: str, count: int = TURNS) -> str:
    session = store.create_session(model, "tools")
    for i in range(count):
        store.append_message(session.id, {"role": "user", "content": f"question {i}"}, 3)
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": f'{{"command": "echo {i}"}}'},
        }
        store.append_message(session.id, {"role": "assistant", "content": "", "tool_calls": [call]}, 10)
        store.append_message(
            session.id,
            {"role": "tool", "tool_call_id": f"c{i}", "name": "bash", "content": f"{i}\n", STATUS_KEY: OK},
            3,
        )
        answer = "\n\n".join(f"Answer {i}, paragraph {p}." for p in range(3))
        store.append_message(session.id, {"role": "assistant", "content": answer}, 20)
    return session.id


def open_app(workspace, store, script, *turns: dict) -> MyrmApp:
    model = script(*(turns or ({"text": "unused"},)))
    sid = seed_tool_turns(store, model)
    return MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)


def headers(app: MyrmApp) -> list[ToolHeader]:
    return list(app.chat_screen.query(ToolHeader))


async def settled(pilot, app: MyrmApp) -> None:
    screen = app.chat_screen
    await wait_until(pilot, lambda: screen.ready.is_set(), what="warm-up")
    await wait_until(pilot, lambda: len(headers(app)) == TURNS, what="history")
    await pilot.pause(0.1)


async def test_typing_after_a_tool_blocks_viewer_goes_to_the_message_and_enter_sends_it(workspace, store, script):
    app = open_app(workspace, store, script, {"text": "got it"})
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await settled(pilot, app)
        await pilot.press("tab")
        assert isinstance(screen.focused, ToolHeader)
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolOutputScreen), what="viewer")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, what="viewer closed")
        assert isinstance(screen.focused, ToolHeader), "the focus is back on the block"
        await type_text(pilot, "hello there")
        assert screen.prompt.text == "hello there", "nothing typed is lost"
        assert focus_of(screen) is screen.prompt
        ended = screen.turns_ended
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.turns_ended > ended, what="the message sent")
        users = [r.message["content"] for r in store.messages(screen.chat.session_id) if r.role == "user"]
        assert users[-1] == "hello there"


async def test_a_blocks_own_keys_stay_its_own(workspace, store, script):
    app = open_app(workspace, store, script)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await settled(pilot, app)
        await pilot.press("tab")
        header = screen.focused
        assert isinstance(header, ToolHeader) and isinstance(header.parent, ToolBlock)
        await pilot.press("space")  # Space folds and unfolds the block: not typed into the message
        assert header.parent.expanded and screen.prompt.text == ""


async def test_tab_walks_the_blocks_from_the_newest_without_jumping_to_the_top(workspace, store, script):
    app = open_app(workspace, store, script)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await settled(pilot, app)
        transcript = screen.transcript
        bottom = transcript.max_scroll_y
        assert bottom > 0 and transcript.scroll_y == bottom
        newest_first = list(reversed(headers(app)))
        await pilot.press("tab")
        assert screen.focused is newest_first[0], "Tab starts at the newest block"
        await pilot.pause(0.05)
        assert transcript.scroll_y > bottom / 2, "the view stays near the newest block, not at the top"
        await pilot.press("tab")
        assert screen.focused is newest_first[1]
        await pilot.press("shift+tab")
        assert screen.focused is newest_first[0]
        await pilot.press("shift+tab")
        assert focus_of(screen) is screen.prompt, "Shift+Tab from the newest block is back at the message"
        await pilot.press("tab", "tab")
        await pilot.press("escape")
        assert focus_of(screen) is screen.prompt, "Esc is back at the message from any block"


async def test_page_and_home_end_keys_scroll_the_conversation_from_the_message(workspace, store, script):
    app = open_app(workspace, store, script)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await settled(pilot, app)
        transcript = screen.transcript
        bottom = transcript.max_scroll_y
        await type_text(pilot, "draft")
        await pilot.press("pageup")
        assert transcript.scroll_y < bottom, "PageUp scrolled the conversation"
        assert screen.prompt.text == "draft" and focus_of(screen) is screen.prompt
        await pilot.press("pagedown", "pagedown", "pagedown")
        assert transcript.scroll_y == transcript.max_scroll_y
        await pilot.press("home")  # a draft: Home is the line's start, the view stays
        assert screen.prompt.cursor_location == (0, 0) and transcript.scroll_y == transcript.max_scroll_y
        await pilot.press("ctrl+home")  # with the modifier, always the conversation
        assert transcript.scroll_y == 0
        await pilot.press("end", "ctrl+u")  # the draft goes: the message is empty
        await pilot.press("end")
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, what="bottom")
        await pilot.press("home")
        assert transcript.scroll_y == 0, "on an empty message Home is the top of the conversation"


async def test_f1_lists_the_new_keys_with_their_ids(workspace, store, script):
    app = open_app(workspace, store, script)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot, app)
        help_text = app.chat_screen.help_markdown()
        for binding_id in (
            "chat.page_up",
            "chat.page_down",
            "chat.top",
            "chat.home",
            "chat.end",
            "chat.next_block",
            "chat.previous_block",
            "tool.open_output",
            "tool.toggle",
        ):
            assert f"`{binding_id}`" in help_text, binding_id
        assert "back to the message" in help_text
