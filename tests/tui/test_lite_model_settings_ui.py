"""The settings screen shows what an empty `lite_model` means now: the automatic choice for the
session's model (its placeholder), while the field itself stays empty so saving keeps it automatic."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.settings import SettingsScreen
from tests.tui.tui_pilot_helpers import field_of, screen_of, scripted_settings, wait_until


@pytest.mark.slow
async def test_the_empty_lite_model_field_shows_the_automatic_choice(workspace, store, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    settings = scripted_settings("anthropic/claude-sonnet-4-5")
    app = MyrmApp(workspace, settings, store=store, config_path=tmp_path / "user" / "config.toml")
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="ready")
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
        field = field_of(screen_of(app, SettingsScreen), "lite_model", Input)

        assert field.value == ""
        assert field.placeholder == "automatic: anthropic/claude-haiku-4-5"
