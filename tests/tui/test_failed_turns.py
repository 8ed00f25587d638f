"""Failed turns in the TUI: the draft comes back after every failed turn (a dropped
stream included) and resending it stores the ask once; a broken user theme, config warnings and a
window too small for myrm are reported inside the app, which keeps running.

Failure first: before the fix, a dropped stream left the input empty (part of a reply had been
shown, so the draft was not restored), a user theme with an invalid CSS value ended the app
(exit code 0, nothing on screen), and config warnings only reached stderr behind the screen.
"""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.cli_commands.common import CommandContext, config_notices
from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.tui.app import DEFAULT_THEME, MyrmApp
from myrm_tui.tui.theming.theme_files import shipped_theme_dir
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, type_text, wait_until

BROKEN_THEME = """name = "broken"
[colors]
primary = "#112233"
[variables]
"block-cursor-text-style" = "wobbly"
"""


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


def _idle(app) -> bool:
    return not app.chat_screen.turn_running


def _stored(store, session_id) -> list[tuple[str, str]]:
    return [(r.role, r.message.get("content") or "") for r in store.messages(session_id)]


async def test_after_a_dropped_stream_the_draft_is_back_and_resending_works(workspace, store, script):
    model = script(
        {"text": "first half and then the second half", "error": "drop_mid_stream", "error_times": 1},
        {"text": "complete answer"},
    )
    app = MyrmApp(workspace, scripted_settings(model, llm_max_attempts=1), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "talk to me")
        await wait_until(pilot, lambda: _idle(app) and screen.turns_ended == 1, what="failed turn")
        assert any(n.level == "error" for n in screen.query(Note))
        assert screen.prompt.text == "talk to me"  # the draft is back although half a reply showed
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and screen.turns_ended == 2, what="resent turn")
        await wait_until(
            pilot, lambda: any(r.text == "complete answer" for r in screen.query(AssistantMessage)), what="reply"
        )
        assert screen.prompt.text == ""
        roles = [role for role, _ in _stored(store, app.chat.session_id)]
        # the cut-off half is an answer, so the resend is a new ask (agent/turn/resend.py)
        assert roles == ["user", "assistant", "user", "assistant"]


async def test_after_a_provider_error_the_resent_draft_is_stored_once(workspace, store, script):
    model = script({"text": "fine now", "error": "auth", "error_times": 1})
    app = MyrmApp(workspace, scripted_settings(model, llm_max_attempts=1), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await _send(pilot, "hello")
        await wait_until(pilot, lambda: _idle(app) and screen.turns_ended == 1, what="failed turn")
        assert screen.prompt.text == "hello"
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and screen.turns_ended == 2, what="resent turn")
        assert _stored(store, app.chat.session_id) == [("user", "hello"), ("assistant", "fine now")]
        await wait_until(pilot, lambda: len(screen.query(UserMessage)) == 1, what="one bubble")
        assert [u.text for u in screen.query(UserMessage)] == ["hello"], "the screen shows what the store holds"


async def test_a_window_too_small_for_myrm_is_said_before_the_first_turn(workspace, store, tmp_path):
    script = tmp_path / "tiny.json"
    script.write_text(json.dumps({"context_window": 5_000, "turns": [{"text": "never"}]}), encoding="utf-8")
    app = MyrmApp(workspace, scripted_settings(f"scripted/{script}"), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set(), what="model resolved")
        notes = [n for n in screen.query(Note) if n.level == "error"]
        assert len(notes) == 1 and "too small" in notes[0].text and "5,000 tokens" in notes[0].text
        assert store.list_sessions() == []  # nothing was sent or stored to find that out


async def test_a_broken_user_theme_falls_back_to_the_default_with_a_notice(workspace, store, script, tmp_path):
    user_themes = tmp_path / "my-themes"
    user_themes.mkdir()
    (user_themes / "broken.toml").write_text(BROKEN_THEME, encoding="utf-8")
    app = MyrmApp(
        workspace,
        scripted_settings(script({"text": "hi"}), theme="broken"),
        store=store,
        watch_themes=False,
        theme_dirs=[shipped_theme_dir(), user_themes],
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause(0.2)
        assert app.is_running and app.theme == DEFAULT_THEME
        [notice] = [m for m in notices(app) if "block-cursor-text-style" in m]
        assert "wobbly" in notice and str(user_themes / "broken.toml") in notice and DEFAULT_THEME in notice
        # choosing it later (/theme, the palette) is refused the same way, and the app goes on
        app.choose_theme("broken")
        await pilot.pause(0.2)
        assert app.is_running and app.theme == DEFAULT_THEME
        await _send(pilot, "still alive?")
        await wait_until(pilot, lambda: app.chat_screen.turns_ended == 1, what="a turn after the refusal")
    assert app.return_code in (0, None)  # Textual sets 1 when the app ended on an exception


async def test_a_live_edit_that_breaks_the_active_theme_is_not_reloaded(workspace, store, script, tmp_path):
    user_themes = tmp_path / "my-themes"
    user_themes.mkdir()
    path = user_themes / "mine.toml"
    path.write_text(BROKEN_THEME.replace('"broken"', '"mine"').replace('"wobbly"', '"bold"'), encoding="utf-8")
    app = MyrmApp(
        workspace,
        scripted_settings(script({"text": "hi"}), theme="mine"),
        store=store,
        watch_themes=False,
        theme_dirs=[shipped_theme_dir(), user_themes],
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause(0.1)
        assert app.theme == "mine"
        path.write_text(BROKEN_THEME.replace('"broken"', '"mine"'), encoding="utf-8")  # the user saves a typo
        assert app.reload_theme_file(path) is None
        await pilot.pause(0.2)
        assert app.is_running and app.theme == "mine"
        assert app.available_themes["mine"].variables["block-cursor-text-style"] == "bold"  # the last good one
        assert any("wobbly" in m for m in notices(app))


async def test_config_warnings_are_shown_inside_the_app(workspace, store, script, tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.toml").write_text("llm_timeout = 0\n", encoding="utf-8")
    loaded = load_settings(workspace, user_config_dir=user, env={})
    warnings = config_notices(CommandContext(workspace, loaded))
    assert len(warnings) == 1 and "llm_timeout" in warnings[0] and str(user / "config.toml") in warnings[0]
    app = MyrmApp(
        workspace, scripted_settings(script({"text": "hi"})), store=store, watch_themes=False, config_notices=warnings
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause(0.1)
        assert warnings[0] in notices(app)


def test_the_untrusted_workspace_warning_is_left_to_the_trust_dialog(tmp_path: Path):
    workspace, user = tmp_path / "ws", tmp_path / "user"
    (workspace / ".myrm").mkdir(parents=True)
    user.mkdir()
    (workspace / ".myrm" / "config.toml").write_text('model = "evil/m"\nmax_steps = 0\n', encoding="utf-8")
    loaded = load_settings(workspace, user_config_dir=user, env={})
    assert loaded.workspace_trust is not None and loaded.workspace_trust.needs_decision
    notices = config_notices(CommandContext(workspace, loaded))
    assert len(notices) == 1 and "max_steps" in notices[0]  # the trust notice is the dialog's job
