"""`/export` writes where the user says, or to the config dir's exports folder; never the repo root
unless asked, and always redacted."""

from __future__ import annotations

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.tui_pilot_helpers import SIZE, type_text, wait_until

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


def _session(store) -> str:
    sid = store.create_session("scripted/none", "deploy").id
    store.append_message(sid, {"role": "user", "content": f"use token {SECRET} to deploy"}, 9)
    store.append_message(sid, {"role": "assistant", "content": "Deployed."}, 2)
    return sid


def _md_files(folder) -> list:
    return sorted(p for p in folder.rglob("*.md"))


async def _export(pilot, app, argument: str = "") -> None:
    await wait_until(pilot, lambda: app.chat_screen.query(UserMessage), what="history")
    await type_text(pilot, "/export" + (f" {argument}" if argument else ""))
    await pilot.press("enter")


async def test_export_without_a_path_goes_to_the_config_dir_not_the_workspace(workspace, store, _private_config_dir):
    sid = _session(store)
    app = MyrmApp(workspace, Settings().with_values(model="scripted/none"), store=store, session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _export(pilot, app)
        target = _private_config_dir / "exports" / f"myrm-session-{sid[:8]}.md"
        await wait_until(pilot, target.exists, what="export written")
    text = target.read_text(encoding="utf-8")
    assert "Deployed." in text and SECRET not in text and "[REDACTED:" in text
    assert _md_files(workspace) == []  # nothing landed in the repository


async def test_export_to_a_named_folder_puts_the_file_inside_it(workspace, store):
    sid = _session(store)
    app = MyrmApp(workspace, Settings().with_values(model="scripted/none"), store=store, session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await _export(pilot, app, "notes/")
        target = workspace / "notes" / f"myrm-session-{sid[:8]}.md"
        await wait_until(pilot, target.exists, what="export written")
    assert SECRET not in target.read_text(encoding="utf-8")
    assert _md_files(workspace) == [target]
