"""Settings, dialogs and the health screen at the size of a default terminal (80×24)."""

from __future__ import annotations

import pytest
from textual.dom import DOMNode
from textual.widgets import Input, Select, Static

from myrm_tui.settings import SETTINGS
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.dialogs import ConfirmScreen
from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.screens.model_picker import ModelPicker
from myrm_tui.tui.screens.settings import SettingsScreen, sections
from tests.tui.tui_pilot_helpers import field_of, scripted_settings, wait_until

SMALL = (80, 24)
WIDE = (120, 40)


def setting_row(screen: SettingsScreen, key: str) -> DOMNode:
    """The row that holds a setting's input (its grandparent)."""
    parent = screen.widget_for(key).parent
    assert parent is not None and parent.parent is not None
    return parent.parent


async def open_settings(pilot) -> SettingsScreen:
    await pilot.press("f2")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen), what="settings")
    await pilot.pause()
    return pilot.app.screen


def field_widths(screen: SettingsScreen) -> dict[str, int]:
    return {
        spec.key: screen.widget_for(spec.key).size.width
        for spec in SETTINGS
        if isinstance(screen.widget_for(spec.key), (Input, Select))
    }


async def test_settings_at_80x24_is_one_column_with_the_first_field_focused(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_settings(pilot)
        first = sections()[0][1][0].key
        assert app.focused is screen.widget_for(first), "typing must edit the first setting straight away"
        await pilot.press("x")
        assert field_of(screen, first, Input).value.endswith("x")

        assert screen.has_class("-narrow")
        scroll = screen.query_one(".scroll")
        assert scroll.max_scroll_x == 0, "nothing may hang past the right edge"
        for widget in screen.query(".setting-row, .setting-input, .setting-help"):
            if widget.display and widget.region.width:
                assert widget.region.right <= scroll.region.right, widget
        # Each description gets a line at least as wide as its longest word, so no word is cut.
        for spec in SETTINGS:
            row_help = setting_row(screen, spec.key).query_one(".setting-help", Static)
            if row_help.region.width:
                assert row_help.size.width >= max(len(word) for word in spec.help.split()), spec.key
        widths = field_widths(screen)
        assert widths["model"] == max(widths.values())
        assert widths["model"] > max(w for key, w in widths.items() if key != "model")


@pytest.mark.slow
async def test_pick_puts_the_chosen_name_in_the_model_field(workspace, store, script, tmp_path):
    other = f"scripted/{tmp_path / 'other.json'}"
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_settings(pilot)
        await pilot.click("#pick-model")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        app.screen.query_one(Input).value = other
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="back in settings")
        assert field_of(screen, "model", Input).value == other


@pytest.mark.slow
async def test_settings_wide_keeps_two_columns_and_the_widest_model_field(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=WIDE) as pilot:
        screen = await open_settings(pilot)
        assert screen.has_class("-roomy")
        steps_row = setting_row(screen, "max_steps")
        label = steps_row.query_one(".setting-label")
        assert label.region.right <= screen.widget_for("max_steps").region.x, "name and field side by side"
        widths = field_widths(screen)
        assert widths["model"] > max(w for key, w in widths.items() if key != "model")


async def test_confirm_dialog_says_which_button_is_focused(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    answers: list[bool | None] = []
    async with app.run_test(size=SMALL) as pilot:
        app.push_screen(ConfirmScreen("Delete session?", "It goes for good.", "Delete", danger=True), answers.append)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.pause()
        hint = app.screen.query_one("#focus-hint", Static)
        assert "Enter: Cancel (focused)" in str(hint.content), "a dangerous question starts on Cancel"
        await pilot.press("tab")
        await pilot.pause()
        assert "Enter: Delete (focused)" in str(hint.content)
        await pilot.press("enter")
        await wait_until(pilot, lambda: answers, what="answer")
    assert answers == [True]


async def test_health_screen_reflows_at_80_columns(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.report, what="report")
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-two-columns")
        cards = list(screen.query(".card"))
        assert len(cards) == 5
        for card in cards:
            assert card.region.width >= 30, "a card keeps a metric and its value on one line"
        scroll = screen.query_one("#cards-scroll")
        assert scroll.max_scroll_x == 0
        last = screen.query_one("#card-session")
        assert last.region.bottom > scroll.region.bottom, "at 24 lines the cards are taller than the screen"
        scroll.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        assert scroll.region.contains_region(last.region), "the last card can be scrolled to"
