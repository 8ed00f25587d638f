"""Helpers for TUI pilots (imported by the test modules; fixtures live in conftest.py)."""

from __future__ import annotations

import html
import json
import re
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget

from myrm_tui.settings import Settings
from myrm_tui.tui.screens.settings import SettingsScreen

# Headless pilots on a shared 2-core box: generous, but a hang still fails in reasonable time.
WAIT_TIMEOUT_S = 30.0
SIZE = (110, 40)


def scripted_settings(model: str, **values: Any) -> Settings:
    return Settings().with_values(**{"model": model, "approval": "ask", **values})


async def wait_until(
    pilot, predicate: Callable[[], object], timeout: float = WAIT_TIMEOUT_S, what: str = "condition"
) -> None:
    """Let the app run until `predicate()` is true (pilots spawn tasks; one pause is not enough)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def type_text(pilot, text: str) -> None:
    keys = ["space" if ch == " " else ch for ch in text]
    await pilot.press(*keys)


def write_script(tmp_path: Path, turns: list[dict[str, Any]], window: int | None = None) -> str:
    """A scripted-model script in `tmp_path`; returns the model name that plays it."""
    path = tmp_path / "context-script.json"
    data: dict[str, Any] = {"turns": turns}
    if window:
        data["context_window"] = window
    path.write_text(json.dumps(data), encoding="utf-8")
    return f"scripted/{path}"


async def send(pilot, app, text: str) -> None:
    """Type a prompt, press Enter and wait until the turn it starts has ended."""
    ended = app.chat_screen.turns_ended
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.chat_screen.turns_ended > ended, what="turn end")


# Every toast message each app was asked to show, oldest first. Weak keys: an app that a test
# dropped is not kept alive by the log.
_NOTICES: weakref.WeakKeyDictionary[App, list[str]] = weakref.WeakKeyDictionary()


def record_notifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """Log what reaches Textual's public `App.notify` (after MyrmApp's own escaping, so the log
    holds the text the toast shows). Why not `app._notifications`: that is Textual's private
    store, and it also forgets a toast once it times out."""
    shown = App.notify

    def recording_notify(self: App, message: str, **options: Any) -> None:
        _NOTICES.setdefault(self, []).append(message)
        shown(self, message, **options)

    monkeypatch.setattr(App, "notify", recording_notify)


ScreenT = TypeVar("ScreenT", bound=Screen)
WidgetT = TypeVar("WidgetT", bound=Widget)


def screen_of(app: App, kind: type[ScreenT]) -> ScreenT:
    """The app's screen as the kind the test waited for (a wrong one fails here, by name)."""
    screen = app.screen
    assert isinstance(screen, kind), screen
    return screen


def screen_now(app: App) -> Screen:
    """The app's screen, read afresh (a key may have changed it since the test last looked)."""
    return app.screen


def field_of(screen: SettingsScreen, key: str, kind: type[WidgetT]) -> WidgetT:
    """The settings screen's input for `key`, as the widget kind that setting uses."""
    widget = screen.widget_for(key)
    assert isinstance(widget, kind), (key, widget)
    return widget


def notices(app: App) -> list[str]:
    """The toast messages `app` has shown so far (needs the `record_notifications` fixture)."""
    return list(_NOTICES.get(app, []))


_SVG_TEXT = re.compile(r"<text ([^>]*)>([^<]*)</text>")
_SVG_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_SVG_ROW = re.compile(r"-line-(\d+)\)$")


def screen_text(app: App) -> str:
    """The characters on the active screen, one line per row, from Textual's public
    `export_screenshot()` (an SVG: one <text> per run of styled characters, placed by x and
    clipped to its row). Why not the compositor's strips: they are Textual's private API."""
    rows: dict[int, list[tuple[int, str]]] = {}
    for attributes, escaped in _SVG_TEXT.findall(app.export_screenshot()):
        attrs = dict(_SVG_ATTR.findall(attributes))
        row = _SVG_ROW.search(attrs.get("clip-path", ""))
        text = html.unescape(escaped).replace("\xa0", " ")
        if row is None or not text:  # the window title, not a terminal row
            continue
        cell = float(attrs["textLength"]) / len(text)
        rows.setdefault(int(row.group(1)), []).append((round(float(attrs["x"]) / cell), text))
    lines = []
    for y in range(max(rows, default=-1) + 1):
        line = ""
        for column, text in sorted(rows.get(y, [])):
            line += " " * (column - cell_len(line)) + text  # cells, not characters: CJK takes two
        lines.append(line.rstrip())
    return "\n".join(lines)
