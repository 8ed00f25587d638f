"""The first minutes of a newcomer: the welcome, Ctrl+C, and keys typed fast around Enter."""

from __future__ import annotations

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.terminal_keys import install_extra_sequences
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.welcome import Welcome
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until


def _idle(app) -> bool:
    return not app.chat_screen.turn_running


async def test_an_empty_session_welcomes_and_names_the_embedded_model_and_its_limits(workspace, store):
    app = MyrmApp(workspace, Settings().with_values(model="local/smollm2"), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set(), what="warm-up")
        welcome = screen.query_one(Welcome)
        text = str(welcome.render())
        assert "local/smollm2" in text and "no tools" in text and "cannot read, edit or run" in text
        assert "Ctrl+O" in text and "F2" in text, "how to pick another model"
        assert "ANTHROPIC_API_KEY" in text and "myrm doctor" in text, "how to add a provider key"


async def test_the_welcome_follows_the_keymap_and_the_model_facts_and_leaves_with_the_first_message(
    workspace, store, script
):
    model = script({"text": "hi back"})
    settings = Settings(keymap={"chat.model": "ctrl+k"}).with_values(model=model, approval="ask")
    app = MyrmApp(workspace, settings, store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set(), what="warm-up")
        text = str(screen.query_one(Welcome).render())
        assert "ctrl+k" in text.lower() and "Ctrl+O" not in text
        assert "128k-token window" in text and "tools" in text, "refined from the registry after warm-up"
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and screen.query(AssistantMessage), what="reply")
        assert not screen.query(Welcome)


async def test_a_resumed_session_shows_no_welcome(workspace, store, script):
    model = script({"text": "first"})
    session = store.create_session(model, "earlier")
    store.append_message(session.id, {"role": "user", "content": "earlier"}, 2)
    store.append_message(session.id, {"role": "assistant", "content": "first"}, 2)
    app = MyrmApp(workspace, scripted_settings(model), session_id=session.id, store=store)
    async with app.run_test(size=SIZE):
        assert not app.chat_screen.query(Welcome)


async def test_ctrl_c_interrupts_a_running_turn_and_keeps_the_draft(workspace, store, script):
    model = script({"text": "a slow reply " * 60, "chunk_size": 3, "delay_ms": 40})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="streaming")
        await type_text(pilot, "next idea")
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: _idle(app), what="interrupted turn")
        assert screen.prompt.text == "next idea", "Ctrl+C never deletes what the user typed"
        assert app.is_running, "one press interrupts; it does not quit"
        stored = [r.message.get("content", "") for r in store.messages(app.chat.session_id) if r.role == "assistant"]
        assert stored and "cut off" in stored[-1], "the part already shown is kept, marked as cut off"


async def test_ctrl_c_twice_while_idle_quits_and_once_does_not(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "x"})), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        await pilot.pause(0.05)
        assert app.is_running and app.chat_screen.prompt.text == "draft"
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running, what="quit")


async def test_keys_typed_right_after_enter_stay_in_the_prompt(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "ok"})), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "first")
        await pilot.press("enter", "s", "e", "c")  # no pause: the submit is still queued
        await wait_until(pilot, lambda: _idle(app) and screen.query(AssistantMessage), what="reply")
        assert [u.text for u in screen.query(UserMessage)] == ["first"]
        assert screen.prompt.text == "sec"


def test_alt_enter_from_the_terminal_is_alt_enter_not_enter():
    """The raw bytes a terminal sends for Alt+Enter, through Textual's real input parser."""
    from textual._xterm_parser import XTermParser
    from textual.events import Key

    install_extra_sequences()
    parser = XTermParser()
    keys = [event.key if isinstance(event, Key) else event for event in [*parser.feed("ab\x1b\rc"), *parser.feed("")]]
    assert keys == ["a", "b", "alt+enter", "c"]
