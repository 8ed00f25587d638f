"""Model and theme switches change this session; only an explicit make-default writes the user
config (a mistyped scripted path used to become every later launch's model)."""

from __future__ import annotations

import json
import tomllib

import pytest
from textual.widgets import Input

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.scope import ScopedChoice, parse_scoped
from myrm_tui.tui.screens.model_picker import ModelPicker
from myrm_tui.tui.widgets.blocks.note import Note
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, send, type_text, wait_until


def _script(tmp_path, name: str, *texts: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": [{"text": t} for t in texts]}), encoding="utf-8")
    return f"scripted/{path}"


def test_default_flag_is_parsed_wherever_it_stands():
    assert parse_scoped("gpt-4o") == ScopedChoice("gpt-4o", False)
    assert parse_scoped("gpt-4o --default") == ScopedChoice("gpt-4o", True)
    assert parse_scoped("--default gpt-4o") == ScopedChoice("gpt-4o", True)
    assert parse_scoped("--default") == ScopedChoice("", True)


async def _command(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


@pytest.mark.slow
async def test_slash_model_changes_this_session_and_leaves_the_config_alone(workspace, store, tmp_path):
    default = _script(tmp_path, "default", "from default", "default again")
    other = _script(tmp_path, "other", "unused", "from other")  # turns go by position
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(workspace, scripted_settings(default), store=store, watch_themes=False, config_path=config)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "hello")
        await _command(pilot, f"/model {other}")
        await wait_until(pilot, lambda: app.chat.model == other, what="switched")
        assert not config.exists()
        note = app.chat_screen.query(Note).last()
        assert "for this session" in note.text and "--default" in note.hint
        # settings applied later (settings screen, a workspace just trusted) keep the session's choice
        app.apply_settings(app.settings.with_values(max_steps=7))
        assert app.chat.model == other
        await send(pilot, app, "who answers?")
        assert store.messages(app.chat.session_id)[-1].message["content"] == "from other"
        assert store.get_session(app.chat.session_id).model == other  # a resume keeps it
        # a new session starts on the default, not on this session's choice
        await _command(pilot, "/clear")
        await wait_until(
            pilot, lambda: app.chat.session_id is None and app.chat_screen.ready.is_set(), what="new session"
        )
        assert app.chat.model == default and app.settings.model == default
        assert not config.exists()


@pytest.mark.slow
async def test_make_default_writes_the_user_config(workspace, store, tmp_path):
    default = _script(tmp_path, "default", "unused")
    other = _script(tmp_path, "other", "unused")
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(workspace, scripted_settings(default), store=store, watch_themes=False, config_path=config)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="ready")
        await _command(pilot, f"/model {other} --default")
        await wait_until(pilot, config.exists, what="saved")
        assert tomllib.loads(config.read_text())["model"] == other
        assert app.chat.model == other and app.settings.model == other
        assert f"Model: {other} (saved as the default)." in notices(app)


async def test_picker_enter_is_this_session_and_its_second_key_makes_default(workspace, store, tmp_path):
    default = _script(tmp_path, "default", "unused")
    first = _script(tmp_path, "first", "unused")
    second = _script(tmp_path, "second", "unused")
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(workspace, scripted_settings(default), store=store, watch_themes=False, config_path=config)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="ready")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        hint = str(app.screen.query_one("#model-hint").render())
        assert "Enter this session" in hint and "Ctrl+S make default" in hint
        app.screen.query_one(Input).value = first
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.model == first, what="session switch")
        assert not config.exists()
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker again")
        app.screen.query_one(Input).value = second
        await pilot.press("ctrl+s")
        await wait_until(pilot, config.exists, what="saved")
        assert tomllib.loads(config.read_text())["model"] == second and app.chat.model == second


async def test_theme_is_for_this_session_unless_made_default(workspace, store, script, tmp_path):
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(
        workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False, config_path=config
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await _command(pilot, "/theme myrm-light")
        await wait_until(pilot, lambda: app.theme == "myrm-light", what="theme applied")
        await wait_until(pilot, lambda: any("/theme --default" in n for n in notices(app)), what="hint")
        await pilot.pause(0.1)
        assert not config.exists()
        await _command(pilot, "/theme --default")
        await wait_until(pilot, config.exists, what="saved")
        assert tomllib.loads(config.read_text())["theme"] == "myrm-light"
        assert "Theme myrm-light saved as the default." in notices(app)
