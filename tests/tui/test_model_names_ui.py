"""Model names in the full-screen app go through the one model-name check (llm/models/check.py):
the settings screen refuses a name nobody serves and warns about a missing key, the picker
names models as `--model` takes them and marks READY ones, its settings variant says it picks
the default, and a fork talks to the model its parent was talking to."""

from __future__ import annotations

import dataclasses
import json
import tomllib

import pytest
from textual.widgets import Input, OptionList, Static

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.fork import ForkScreen
from myrm_tui.tui.screens.model_picker import ModelPicker
from myrm_tui.tui.screens.settings import SettingsScreen
from tests.tui.tui_pilot_helpers import (
    SIZE,
    field_of,
    notices,
    screen_of,
    scripted_settings,
    send,
    type_text,
    wait_until,
)

SERVER = "http://127.0.0.1:9/v1"


def _script(tmp_path, name: str, *texts: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": [{"text": t} for t in texts]}), encoding="utf-8")
    return f"scripted/{path}"


async def _open_settings(pilot, app) -> SettingsScreen:
    await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="ready")
    await pilot.press("f2")
    await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
    return app.screen


@pytest.mark.slow
async def test_settings_refuse_a_model_nobody_serves_and_keep_what_was_typed(workspace, store, tmp_path):
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(workspace, scripted_settings(_script(tmp_path, "a", "x")), store=store, config_path=config)
    async with app.run_test(size=(120, 50), notifications=True) as pilot:
        screen = await _open_settings(pilot, app)
        field_of(screen, "model", Input).value = "gpt4o"
        await pilot.press("ctrl+s")
        error = screen.query_one("#settings-error", Static)
        await wait_until(pilot, lambda: "openai/gpt-4o" in str(error.content), what="the refusal")
        assert app.screen is screen and field_of(screen, "model", Input).value == "gpt4o"
        assert not config.exists(), "nothing was saved"


@pytest.mark.slow
async def test_saving_a_model_whose_key_is_missing_warns_naming_the_variable(workspace, store, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(workspace, scripted_settings(_script(tmp_path, "a", "x")), store=store, config_path=config)
    async with app.run_test(size=(120, 50), notifications=True) as pilot:
        screen = await _open_settings(pilot, app)
        field_of(screen, "model", Input).value = "openai/gpt-4o"
        await pilot.press("ctrl+s")
        await wait_until(pilot, config.exists, what="saved")
        assert tomllib.loads(config.read_text())["model"] == "openai/gpt-4o"
        await wait_until(pilot, lambda: any("OPENAI_API_KEY" in n for n in notices(app)), what="the key warning")


@pytest.mark.slow
async def test_the_pick_dialog_of_the_settings_chooses_the_default_with_ready_marks(workspace, store, tmp_path):
    settings = scripted_settings(_script(tmp_path, "a", "x"))
    settings = dataclasses.replace(settings, models={"openai/my-box": {"api_base": SERVER}})  # a declared server
    app = MyrmApp(workspace, settings, store=store, config_path=tmp_path / "cfg.toml")
    async with app.run_test(size=(120, 50), notifications=True) as pilot:
        await _open_settings(pilot, app)
        await pilot.click("#pick-model")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        picker = screen_of(app, ModelPicker)
        title = str(picker.query_one("#model-title").render())
        assert "default" in title and "for this session" not in title
        listing = picker.query_one(OptionList)

        def first_row(name: str) -> str | None:
            if not picker.results or picker.results[0].name != name:
                return None
            return str(listing.get_option_at_index(0).prompt)

        picker.query_one(Input).value = "gpt4o"
        await wait_until(pilot, lambda: first_row("openai/gpt-4o"), what="rows named as --model takes them")
        assert (first_row("openai/gpt-4o") or "").startswith("no key"), "no OpenAI key here: not READY"
        picker.query_one(Input).value = "my-box"
        await wait_until(pilot, lambda: first_row("openai/my-box"), what="the declared model")
        assert (first_row("openai/my-box") or "").startswith("READY")
        picker.query_one(Input).value = "openai/nobody-serves-this"
        await wait_until(pilot, lambda: picker.results == [], what="no match")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Unknown model" in str(listing.get_option_at_index(0).prompt), what="refusal")
        assert app.screen is picker, "a name nobody serves is not taken"


@pytest.mark.slow
async def test_a_fork_talks_to_its_parents_model_not_the_saved_default(workspace, store, tmp_path):
    default = _script(tmp_path, "default", "from default", "default again")
    chosen = _script(tmp_path, "chosen", "unused", "from chosen", "chosen again")
    app = MyrmApp(workspace, scripted_settings(default), store=store, config_path=tmp_path / "cfg.toml")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "hello")
        await type_text(pilot, f"/model {chosen}")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.model == chosen, what="session switch")
        parent = app.chat.session_id
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, ForkScreen), what="fork dialog")
        await pilot.press("enter")  # the first choice: full history
        await wait_until(
            pilot,
            lambda: app.chat.session_id not in (None, parent) and app.chat_screen.ready.is_set(),
            what="the fork",
        )
        child = app.chat.session_id
        assert app.chat.model == chosen, "the fork shows its parent's model"
        assert store.get_session(child).model == chosen, "the sessions list says the same"
        await send(pilot, app, "who answers?")
        assert store.messages(child)[-1].message["content"] == "from chosen"
