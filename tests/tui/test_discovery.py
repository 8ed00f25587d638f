"""Finding things: F1 lists each key once in one notation, the slash popup lists every command
from A to Z, and the palette offers nothing that does not work."""

from __future__ import annotations

import re

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.key_help import BoundKey, key_rows, key_table
from myrm_tui.tui.prompt.slash_commands import popup_order, with_custom
from myrm_tui.tui.screens.dialogs import TextScreen
from tests.tui.tui_pilot_helpers import SIZE, screen_of, scripted_settings, type_text, wait_until

# The notation the README and the welcome use: "Ctrl+O", "Shift+Enter", "F2", "Esc", a bare "y".
# formatting.pretty_key's notation: its key words (Esc, PgUp), function keys, letters as typed
ONE_NOTATION = re.compile(r"^(?:(?:Ctrl|Alt|Shift)\+)*(?:F\d+|PgUp|PgDn|[A-Z][a-z]+|[A-Z0-9]|[a-z])$")


def key_cells(markdown: str) -> list[str]:
    """Every key named in the first table of F1 (a row may list several, split by " / ")."""
    rows = markdown.split("\n\n")[0].splitlines()[2:]
    keys: list[str] = []
    for row in rows:
        cell = row.split("|")[1]
        keys += [key.strip().strip("`") for key in cell.split(" / ")]
    return keys


async def test_f1_lists_each_key_once_in_one_notation(workspace, store, script):
    settings = Settings(scripted_settings(script({"text": "unused"})).values, keymap={"chat.fork": "f6"})
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen), what="help")
        text = screen_of(app, TextScreen).markdown
    keys = key_cells(text)
    assert len(keys) == len(set(keys)), f"listed twice: {sorted(k for k in keys if keys.count(k) > 1)}"
    wrong = [key for key in keys if not ONE_NOTATION.match(key)]
    assert not wrong, f"not in the one notation: {wrong}"
    assert {"Esc", "Enter", "Up", "Ctrl+P", "F1", "y"} <= set(keys)
    esc = next(row for row in text.splitlines() if row.startswith("| `Esc` |"))
    assert "Interrupt" in esc and "Close popup" in esc and "`chat.interrupt`" in esc  # all it does, one row
    assert "| `F6` | Fork session | `chat.fork` |" in text  # the keymap applies
    assert "| `Shift+Enter` / `Ctrl+J` / `Alt+Enter` | Newline |" in text  # same action, one row
    commands = re.findall(r"^\| `(/[a-z-]+)", text, flags=re.MULTILINE)
    assert commands == sorted(commands) and len(commands) == len(with_custom())


def test_key_rows_merge_a_shared_key_and_keep_letters_as_typed():
    rows = key_rows(
        [
            BoundKey("chat.interrupt", "Interrupt", "escape"),
            BoundKey("prompt.close_popup", "Close popup", "escape"),
            BoundKey("approval.allow", "Allow once", "y"),
            BoundKey("chat.help", "Keys", "f1"),
            BoundKey("chat.jump", "Jump to bottom", "ctrl+end"),
        ]
    )
    assert [row.keys for row in rows] == [("F1",), ("Ctrl+End",), ("Esc",), ("y",)]
    assert rows[2].actions == (("Interrupt", "chat.interrupt"), ("Close popup", "prompt.close_popup"))
    table = key_table(rows)
    assert table[-1] == "| `y` | Allow once (in an approval) | `approval.allow` |"


def test_popup_order_is_alphabetical_with_prefix_matches_first():
    names = ["/settings", "/compact", "/copy", "/clear", "/sessions", "/mcp"]
    assert popup_order("/", names) == ["/clear", "/compact", "/copy", "/mcp", "/sessions", "/settings"]
    assert popup_order("/co", names) == ["/compact", "/copy"]
    assert popup_order("/se", names) == ["/sessions", "/settings"]
    assert popup_order("/cp", names) == ["/compact", "/copy", "/mcp"]  # loose matches, A to Z
    assert popup_order("/mc", names) == ["/mcp", "/compact"]  # the prefix match before loose ones


async def test_slash_popup_lists_every_command_alphabetically(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "/")
        await wait_until(pilot, lambda: screen.popup.open, what="popup")
        shown = [choice.value for choice in screen.popup.choices]
        everything = sorted(command.name for command in with_custom(screen.custom_slash()))
        assert shown == everything and len(shown) > 8  # more than fit: the popup scrolls
        await pilot.press("up")  # wraps to the last command, scrolled into view
        current = screen.popup.current
        assert current is not None and current.value == everything[-1]
        assert screen.popup.scroll_offset.y > 0


async def test_palette_offers_no_screenshot_command(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=SIZE):
        titles = [command.title for command in app.get_system_commands(app.screen)]
    assert "Screenshot" not in titles
    assert "Quit" in titles and "Keys" in titles  # the others stay
