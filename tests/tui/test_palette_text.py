"""The command palette's theme and export entries say what they do.

Seen: "Switch and remember the theme" for an entry that changes the theme until the app quits
(nothing is saved), and "Write this session to a Markdown file in the workspace" for an export
that goes to myrm's own exports folder (a file in the repository would be swept into a commit).
Each entry is run here and what it did is compared with what it says.
"""

from __future__ import annotations

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.transcript.export_target import default_export_path
from tests.tui.tui_pilot_helpers import notices, scripted_settings, send, wait_until

SIZE = (110, 40)


def entry(app: MyrmApp, title: str):
    return next(c for c in app.get_system_commands(app.screen) if c.title == title)


async def test_theme_entry_is_for_this_run_and_says_so(workspace, store, script, tmp_path):
    config = tmp_path / "user-config.toml"
    app = MyrmApp(
        workspace, scripted_settings(script({"text": "hi"})), store=store, watch_themes=False, config_path=config
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="warm-up")
        theme = entry(app, "Theme: myrm-light")
        theme.callback()
        await pilot.pause(0.2)
        assert app.theme == "myrm-light"
        assert not config.exists(), "nothing was saved"
        assert "remember" not in theme.help.lower() and "until you quit" in theme.help


async def test_export_entry_names_the_folder_it_writes_to(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "hi"})), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "hello")
        export = entry(app, "Export session to Markdown")
        export.callback()
        await wait_until(pilot, lambda: any("Exported to" in n for n in notices(app)), what="export")
        assert app.chat.session_id is not None
        written = default_export_path(app.chat.session_id)
        assert written.is_file() and workspace not in written.parents
        assert "workspace" not in export.help and "exports folder" in export.help
