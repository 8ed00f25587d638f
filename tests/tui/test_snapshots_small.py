"""SVG snapshots at the size of a default terminal (80×24), and the first screen.

Same seeded data and fixed paths as test_snapshots.py. The README shows the settings and welcome
SVGs: after re-recording, copy them to `screenshots/settings-80x24.svg` and `screenshots/welcome.svg`.
"""

from __future__ import annotations

import pytest

from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.screens.settings import SettingsScreen
from tests.tui.snapshot_helpers import make_app, seed, settle
from tests.tui.tui_pilot_helpers import wait_until

SMALL = (80, 24)


@pytest.mark.slow
def test_settings_screen_80x24(snap_compare, workspace, store):
    app = make_app(workspace, store)

    async def open_settings(pilot):
        await settle(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen), what="settings")
        pilot.app.screen.widget_for("model").cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=SMALL, run_before=open_settings)


def test_health_screen_80x24(snap_compare, workspace, store):
    app = make_app(workspace, store, seed(store))

    async def open_health(pilot):
        await settle(pilot)
        await pilot.press("f3")
        await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, HealthScreen) and pilot.app.screen.report, what="report"
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=SMALL, run_before=open_health)


def test_welcome_screen(snap_compare, workspace, store, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the key line shows only without the key
    app = make_app(workspace, store)
    assert snap_compare(app, terminal_size=SMALL, run_before=settle)
