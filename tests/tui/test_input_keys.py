"""The prompt (slash popup, history, @file, external editor), keys, help, palette and themes."""

from __future__ import annotations

import os
import stat
import tomllib

import pytest
from textual.command import CommandList, CommandPalette

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.external_editor import edit_text, editor_command
from myrm_tui.tui.prompt.completion import CompletionRequest, apply_completion, completion_at, list_workspace_files
from myrm_tui.tui.prompt.prompt_history import PromptHistory
from myrm_tui.tui.prompt.slash_commands import parse_command
from myrm_tui.tui.screens.dialogs import TextScreen
from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.theming.theme_files import ThemeFileError, load_theme_file, load_themes, shipped_theme_dir
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.tui_pilot_helpers import SIZE, notices, screen_of, scripted_settings, send, type_text, wait_until


def test_parse_command_tells_commands_from_paths():
    parsed = parse_command("/compact  src/app.py")
    assert parsed is not None and parsed.command is not None
    assert parsed.command.name == "/compact" and parsed.argument == "src/app.py"
    assert parse_command("/usr/bin is missing") is None  # a path, sent as a message
    assert parse_command("hello /fork") is None
    unknown = parse_command("/frok")
    assert unknown is not None
    assert unknown.command is None and unknown.name == "/frok"


def test_completion_token_and_splice():
    assert completion_at("/co", 0, 3) == CompletionRequest("slash", "/co", 0, 0, 3)
    assert completion_at("/compact focus", 0, 14) is None  # past the command word
    request = completion_at("look at @src/ma please", 0, 15)
    assert request == CompletionRequest("file", "src/ma", 0, 8, 15)
    text, cursor = apply_completion("look at @src/ma please", request, "src/main.py")
    assert text == "look at @src/main.py please" and cursor == (0, 21)
    second_line = completion_at("line one\n@do", 1, 3)
    assert second_line is not None and second_line.kind == "file"


def test_workspace_files_skip_dependencies_and_hidden(tmp_path):
    for rel in ("src/app.py", "README.md", ".git/config", "node_modules/x/i.js", ".myrm/sessions.db", ".env"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    assert list_workspace_files(tmp_path) == ["README.md", "src/app.py"]
    assert len(list_workspace_files(tmp_path, limit=1)) == 1


def test_prompt_history_keeps_the_draft():
    history = PromptHistory(["one", "two", "two", " "])
    assert history.entries == ["one", "two"]
    assert history.previous("draft") == "two" and history.previous("two") == "one"
    assert history.previous("one") is None
    assert history.next() == "two" and history.next() == "draft" and history.next() is None


def test_external_editor_round_trip(tmp_path):
    editor = tmp_path / "fake-editor.sh"
    editor.write_text('#!/bin/sh\nprintf "%s edited\\n" "$(cat "$1")" > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    assert editor_command({"EDITOR": f"{editor} --wait"}) == [str(editor), "--wait"]
    assert editor_command({"VISUAL": "code -w", "EDITOR": "vi"}) == ["code", "-w"]
    assert edit_text("draft", [str(editor)]) == "draft edited"


async def test_slash_popup_filters_completes_and_runs(workspace, store, script):
    model = script({"text": "unused"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "/co")
        await wait_until(pilot, lambda: screen.popup.open, what="popup")
        assert [c.value for c in screen.popup.choices] == ["/compact", "/copy"]  # alphabetical, not by length
        await pilot.press("down", "up", "tab")  # to /copy, back to /compact, accept
        assert screen.prompt.text == "/compact " and not screen.popup.open
        screen.prompt.clear()
        await type_text(pilot, "/hel")
        await pilot.press("enter")  # Enter on a partial command completes it first…
        assert screen.prompt.text == "/help "
        await pilot.press("enter")  # …and runs it when complete
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen), what="help")
        await pilot.press("escape")
        await type_text(pilot, "/frob")
        await pilot.press("escape")  # closes the popup, keeps the text
        await pilot.press("enter")
        assert "Unknown command /frob" in notices(app)[-1] and screen.prompt.text == "/frob"


@pytest.mark.slow
async def test_history_and_at_file_completion(workspace, store, script):
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print()")
    (workspace / "notes.md").write_text("n")
    model = script({"text": "a"}, {"text": "b"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "first prompt")
        await send(pilot, app, "second prompt")
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert screen.prompt.text == "second prompt"
        await pilot.press("up")
        assert screen.prompt.text == "first prompt"
        await pilot.press("down", "down")
        assert screen.prompt.text == "draft"
        screen.prompt.clear()
        await type_text(pilot, "open @smain")
        await wait_until(pilot, lambda: screen.popup.open, what="file popup")
        assert screen.popup.choices[0].value == "src/main.py"
        await pilot.press("tab")
        assert screen.prompt.text == "open @src/main.py "


async def test_help_lists_every_binding_and_the_keymap_applies(workspace, store, script):
    model = script({"text": "unused"})
    settings = Settings(scripted_settings(model).values, keymap={"chat.panel": "f8", "chat.health": "f9"})
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await pilot.press("ctrl+b")  # moved away: no longer toggles
        assert not screen.panel.display
        await pilot.press("f8")
        assert screen.panel.display
        await pilot.press("f9")
        await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen), what="health")
        await pilot.press("escape")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen), what="help")
        text = app.screen.markdown
        for binding_id in (
            "chat.compact",
            "chat.fork",
            "chat.settings",
            "chat.model",
            "chat.sessions",
            "chat.panel",
            "chat.health",
            "chat.help",
            "chat.editor",
            "chat.interrupt",
            "app.quit",
            "prompt.submit",
            "app.command_palette",
        ):
            assert f"`{binding_id}`" in text, binding_id
        assert "| `F8` | Compaction panel |" in text and "| `F9` | Context health |" in text
        assert "`/compact [focus]`" in text


@pytest.mark.slow
async def test_palette_offers_context_aware_commands(workspace, store, script):
    model = script({"text": "hi"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        titles = [command.title for command in app.get_system_commands(screen)]
        assert "Compact now" not in titles and "Switch model" in titles  # no session yet
        assert "Theme: myrm-light" in titles
        await send(pilot, app, "hello")
        titles = [command.title for command in app.get_system_commands(screen)]
        assert {"Compact now", "Fork session", "Export session to Markdown", "Show compaction panel"} <= set(titles)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
        await type_text(pilot, "compaction panel")
        await wait_until(
            pilot,
            lambda: (
                app.screen.query("CommandList Option") or app.screen.query_one("CommandList", CommandList).option_count
            ),
            what="hits",
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen and screen.panel.display, what="panel via palette")


def test_theme_files_load_and_errors_are_named(tmp_path):
    loaded = load_themes([shipped_theme_dir()])
    assert {"myrm-dark", "myrm-light", "myrm-dusk", "myrm-high-contrast"} <= set(loaded.themes)
    assert not loaded.problems and loaded.themes["myrm-light"].dark is False
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[colors]\nprimary = "not a colour"\n')
    try:
        load_theme_file(bad)
    except ThemeFileError as exc:
        assert "colour `primary`" in str(exc) and str(bad) in str(exc)
    else:
        raise AssertionError("a bad colour must be refused")
    (tmp_path / "broken.toml").write_text("name = ")
    result = load_themes([tmp_path])
    assert len(result.problems) == 2 and not result.themes


async def test_user_theme_live_reload_and_choice_persisted(workspace, store, script, tmp_path):
    model = script({"text": "unused"})
    user_themes = tmp_path / "user-themes"
    user_themes.mkdir()
    theme_file = user_themes / "mine.toml"
    theme_file.write_text('name = "mine"\n[colors]\nprimary = "#112233"\n')
    config = tmp_path / "cfg.toml"
    app = MyrmApp(
        workspace,
        scripted_settings(model),
        store=store,
        config_path=config,
        theme_dirs=[shipped_theme_dir(), user_themes],
        watch_themes=True,
    )
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "myrm-dark"  # the default setting, from themes/
        await type_text(pilot, "/theme mine --default")
        await pilot.press("enter")
        await wait_until(pilot, lambda: config.exists() and "mine" in config.read_text(), what="persisted")
        assert tomllib.loads(config.read_text())["theme"] == "mine" and app.settings.theme == "mine"
        await pilot.pause(0.3)  # the watcher is running
        theme_file.write_text('name = "mine"\n[colors]\nprimary = "#AA0000"\n')

        def primary() -> str | None:
            theme = app.get_theme("mine")
            assert theme is not None
            return theme.primary

        await wait_until(pilot, lambda: primary() == "#AA0000", what="live reload", timeout=15)
        assert app.current_theme.primary == "#AA0000"
    assert app._theme_stop.is_set()  # the watcher was told to stop on exit
    assert os.environ["MYRM_CONFIG_DIR"]  # pilots never write the real user config


@pytest.mark.slow
async def test_remaining_slash_commands(workspace, store, script, monkeypatch):
    note_call = {"id": "n1", "name": "session_note", "arguments": {"text": "tests run with make check"}}
    model = script({"tool_calls": [note_call]}, {"text": "Noted. **Done.**"})
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store, watch_themes=False)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)

    async def command(text: str) -> None:
        app.chat_screen.prompt.load_text(text)
        await pilot.press("enter")
        await pilot.pause()

    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await command("/export")
        assert "send a message first" in notices(app)[-1]
        await send(pilot, app, "remember how to run the tests")
        sid = app.chat.session_id
        await command("/copy")
        assert copied == ["Noted. **Done.**"] and "Copied 16 characters." in notices(app)[-1]
        await command("/notes")
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen), what="notes")
        assert screen_of(app, TextScreen).markdown == "- tests run with make check"
        await pilot.press("escape")
        await command("/export out/session.md")
        exported = workspace / "out" / "session.md"
        assert exported.exists() and "tests run with make check" in exported.read_text()
        await command("/settings")
        await wait_until(pilot, lambda: app.screen.id == "settings-screen", what="settings")
        await pilot.press("escape")
        await command("/sessions")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "SessionsScreen", what="sessions")
        await pilot.press("escape")
        await command("/theme")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="theme picker")
        await pilot.press("escape")
        await pilot.press("ctrl+g")  # headless: no terminal to hand over; the draft is untouched
        assert "cannot hand over" in notices(app)[-1]
        await command("/clear")
        await wait_until(pilot, lambda: app.chat.session_id is None, what="new session")
        assert not app.chat_screen.query(UserMessage) and store.get_session(sid)
