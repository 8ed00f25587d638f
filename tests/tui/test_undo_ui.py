"""/undo and /rewind in the chat: real app, scripted model, real tools and store (pilot)."""

from __future__ import annotations

import pytest
from textual.widgets import Button, OptionList, Static

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.rewind import RewindScreen
from myrm_tui.tui.screens.undo import UndoScreen
from myrm_tui.tui.widgets.blocks.note import Note
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, send, type_text, wait_until


def write_call(call_id: str, path: str, content: str) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "file_write", "arguments": {"path": path, "content": content}}]}


def notes(app) -> list[str]:
    return [n.text for n in app.chat_screen.query(Note)]


async def command(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_undo_previews_the_diff_and_restores_on_confirm(workspace, store, script):
    (workspace / "app.py").write_text("print('hello')\n")
    model = script(write_call("c1", "app.py", "print('bye')\n"), {"text": "changed"})
    # The confirm key is remapped through the keymap setting, like every binding.
    settings = Settings(keymap={"undo.restore": "r"}).with_values(model=model, approval="auto-edit")
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await command(pilot, "/undo")
        assert "No file changes to undo" in notices(app)[-1]
        await send(pilot, app, "say bye")
        assert (workspace / "app.py").read_text() == "print('bye')\n"

        await command(pilot, "/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, UndoScreen), what="undo dialog")
        dialog = app.screen
        shown = "\n".join(str(s.render()) for s in dialog.query(Static))
        assert "Undo the file changes of “say bye”" in shown
        assert "restore app.py" in shown and "-print('bye')" in shown and "+print('hello')" in shown
        assert not dialog.query_one("#restore", Button).disabled
        assert "R restores" in shown
        await pilot.press("r")
        await wait_until(pilot, lambda: app.screen is app.chat_screen, what="dialog closed")
        assert (workspace / "app.py").read_text() == "print('hello')\n"
        assert any(n.startswith("Undone: restored app.py") for n in notes(app))


async def test_undo_after_a_manual_edit_needs_the_overwrite_key(workspace, store, script):
    model = script(write_call("c1", "new.txt", "made by the model\n"), {"text": "made"})
    app = MyrmApp(workspace, scripted_settings(model, approval="auto-edit"), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "make a file")
        (workspace / "new.txt").write_text("made by the model, then edited by me\n")
        await command(pilot, "/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, UndoScreen), what="undo dialog")
        dialog = app.screen
        assert "Changed since the turn wrote them: new.txt" in str(dialog.query_one("#undo-conflict", Static).render())
        assert dialog.query_one("#restore", Button).disabled
        await pilot.press("y")  # plain restore does not clobber
        await pilot.pause()
        assert app.screen is dialog and (workspace / "new.txt").exists()
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: app.screen is app.chat_screen, what="dialog closed")
        assert not (workspace / "new.txt").exists()


@pytest.mark.slow
async def test_rewind_restores_files_and_forks_the_conversation(workspace, store, script):
    model = script(
        write_call("c1", "a.txt", "one\n"),
        {"text": "first done"},
        write_call("c2", "a.txt", "two\n"),
        {"text": "second done"},
    )
    app = MyrmApp(workspace, scripted_settings(model, approval="auto-edit"), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "first")
        await send(pilot, app, "second")
        parent = app.chat.session_id
        await command(pilot, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), what="rewind dialog")
        choices = app.screen.query_one(OptionList)
        assert choices.option_count == 2 and choices.highlighted == 1  # newest first in reach
        await pilot.press("b")  # files and conversation, to before "second"
        await wait_until(pilot, lambda: isinstance(app.screen, UndoScreen), what="files preview")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.chat.session_id not in (None, parent), what="fork opened")
        assert (workspace / "a.txt").read_text() == "one\n"
        child = store.get_session(app.chat.session_id)
        assert child.parent_id == parent
        contents = [m.message["content"] for m in store.messages(child.id)]
        assert contents[-1] == "first done" and "second" not in contents
        await wait_until(pilot, lambda: app.chat_screen.prompt.text == "second", what="draft put back")
        # The original session keeps every message (append-only).
        assert [m.message["content"] for m in store.messages(parent)][-1] == "second done"


PARSER_BEFORE = "def parse(text):\n    return text.split('\\n')[:-1]\n"
PARSER_AFTER = "def parse(text):\n    return text.splitlines()\n"


def seed_checkpoints(store, workspace, session_id: str) -> None:
    """The seeded turn edited src/parser.py, created tests/test_parser.py and rewrote notes.md;
    the user edited notes.md afterwards (a conflict)."""
    import hashlib

    from myrm_tui.store import event_kinds

    turn = next(r.id for r in store.messages(session_id) if r.message["role"] == "user")
    files = {
        "src/parser.py": (PARSER_BEFORE, PARSER_AFTER, PARSER_AFTER),
        "tests/test_parser.py": (None, "def test_parse():\n    assert parse('a\\nb') == ['a', 'b']\n", None),
        "notes.md": ("# Notes\n", "# Notes\nparser fixed\n", "# Notes\nparser fixed\nmy own line\n"),
    }
    for path, (before, after, now) in files.items():
        target = workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(now if now is not None else after)
        store.append_event(
            session_id,
            event_kinds.CHECKPOINT,
            {
                "turn": turn,
                "path": path,
                "before": store.vault.put(before) if before is not None else None,
                "after": hashlib.sha256(after.encode()).hexdigest(),
                "source": "file-tool",
            },
        )


def test_undo_preview_snapshot(snap_compare, workspace, store):
    from tests.tui.snapshot_helpers import SNAP_SIZE, make_app, seed, settle

    session_id = seed(store)
    seed_checkpoints(store, workspace, session_id)
    app = make_app(workspace, store, session_id)

    async def open_undo(pilot):
        await settle(pilot)
        await command(pilot, "/undo")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, UndoScreen), what="undo dialog")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=open_undo)
