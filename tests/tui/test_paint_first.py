"""The `myrm` launch paints a start screen first (MyrmApp(paint_first=True), screens/start.py):
the user can type at once, and the chat screen that replaces it keeps the draft and sends it."""

from __future__ import annotations

import pytest

from myrm_tui.tui.app import DEFAULT_THEME, EXIT_MODEL_REFUSED, MyrmApp
from myrm_tui.tui.screens.chat.screen import ChatScreen
from myrm_tui.tui.screens.start import StartPrompt, StartScreen
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, type_text, wait_until


class HeldStart(MyrmApp):
    """Holds the swap to the chat screen until the test runs it, so keys land on the start screen.
    (Waiting inside `_finish_start` would block the app's message queue, keys included.)"""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.held = False

    async def _finish_start(self) -> None:
        self.held = True


def chat_composed(app: MyrmApp) -> bool:
    """The chat screen is on top *and* composed: `app.screen` turns into it as the switch
    starts, before it has children (an exit in between is the quit race tested below)."""
    screen = app.screen
    return isinstance(screen, ChatScreen) and screen.is_mounted and bool(screen.query("#prompt"))


async def test_enter_on_the_start_screen_is_sent_when_the_chat_is_ready(workspace, script):
    model = script({"text": "hello from the script"})
    app = HeldStart(workspace, scripted_settings(model), paint_first=True, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, StartScreen) and not app.chat_opened
        assert isinstance(app.focused, StartPrompt)
        await type_text(pilot, "draft typed early")
        await pilot.press("enter")  # before the chat is ready: remembered, no newline
        await type_text(pilot, " and more")  # typed after Enter: stays as the next draft
        assert app.screen.typed() == ("draft typed early and more", (0, 26), ["draft typed early"])
        await wait_until(pilot, lambda: app.held, what="chat modules loaded")
        await MyrmApp._finish_start(app)
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat screen")
        chat = app.chat_screen
        # No second Enter: the message typed and sent in the first second goes out by itself.
        await wait_until(pilot, lambda: chat.query(AssistantMessage) and not chat.turn_running, what="reply")
        assert "hello from the script" in chat.query(AssistantMessage).last().text
        assert chat.prompt.text == " and more"
    assert app.resume_session_id is not None  # the session was stored, as without paint_first


async def test_a_draft_without_enter_moves_over_and_waits(workspace, script):
    app = HeldStart(workspace, scripted_settings(script({"text": "x"})), paint_first=True, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "still thinking")
        await wait_until(pilot, lambda: app.held, what="chat modules loaded")
        await MyrmApp._finish_start(app)
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat screen")
        chat = app.chat_screen
        assert chat.prompt.text == "still thinking" and chat.prompt.cursor_location == (0, len("still thinking"))
        await pilot.pause()
        assert not chat.query(AssistantMessage) and not chat.turn_running, "nothing was sent"


async def test_quitting_on_the_start_screen_opens_nothing(workspace, script):
    app = HeldStart(workspace, scripted_settings(script({"text": "x"})), paint_first=True, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, StartScreen)
        await pilot.press("ctrl+q")
    assert not app.chat_opened and app.resume_session_id is None
    assert not (workspace / ".myrm").exists(), "no store was created"


async def test_without_holding_the_chat_screen_follows_by_itself(workspace, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "x"})), paint_first=True, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: chat_composed(app), what="chat screen composed")
        assert app.chat_opened and len(app.screen_stack) == 2


async def test_a_refused_model_ends_the_launch_after_the_first_frame_with_nothing_opened(workspace, script):
    """The unknown-model check runs behind the start screen (it may import litellm): a refusal
    ends the app with exit code 2 and its reason, before any store or session exists."""
    checked: list[str] = []

    def check() -> str:
        checked.append("asked")
        return "Unknown model 'gpt-9': try `myrm models --search gpt`."

    app = MyrmApp(
        workspace, scripted_settings(script({"text": "x"})), paint_first=True, watch_themes=False, model_check=check
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.refusal is not None, what="refusal")
    assert checked == ["asked"]
    assert app.return_code == EXIT_MODEL_REFUSED and (app.refusal or "").startswith("Unknown model 'gpt-9'")
    assert not app.chat_opened and app.resume_session_id is None
    assert not (workspace / ".myrm").exists(), "no store was created"


@pytest.mark.parametrize("check", [lambda: None, lambda: 1 / 0], ids=["accepted", "crashed"])
async def test_an_accepted_model_opens_the_chat_and_a_crashed_check_does_not_wedge_the_start(workspace, script, check):
    app = MyrmApp(
        workspace, scripted_settings(script({"text": "x"})), paint_first=True, watch_themes=False, model_check=check
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: chat_composed(app), what="chat screen composed")
        assert app.refusal is None and app.chat_opened


async def test_a_quit_as_the_chat_screen_opens_ends_the_app_cleanly(workspace, script, monkeypatch):
    """Seen under CPU load: the app began closing between the switch to the chat screen and its
    compose, so Textual mounted no children and `ChatScreen.on_mount` raised NoMatches out of the
    app. Here the quit lands exactly there, every time: compose mounts nothing and asks to exit."""

    async def closing_mount(screen: ChatScreen, widgets) -> None:
        screen.app.exit()  # what Textual does for a closing screen: no children mounted

    monkeypatch.setattr(ChatScreen, "mount_composed_widgets", closing_mount)
    app = MyrmApp(workspace, scripted_settings(script({"text": "x"})), paint_first=True, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat screen")
        await wait_until(pilot, lambda: not app.is_running, what="exit")
    assert app.return_code == 0 and app.chat_opened


async def test_the_theme_is_chosen_before_the_first_frame(workspace, script):
    """Set in __init__, not on_mount (a theme set on a running app re-parses every stylesheet
    before the first frame); a theme that is not installed still falls back and says so."""
    settings = scripted_settings(script({"text": "x"}), theme="no-such-theme")
    app = HeldStart(workspace, settings, paint_first=True, watch_themes=False)
    assert app.theme == DEFAULT_THEME  # before the app runs
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause(0.2)
        assert app.theme == DEFAULT_THEME
        assert any("'no-such-theme' is not installed" in m for m in notices(app)), notices(app)
