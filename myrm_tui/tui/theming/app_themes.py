"""The app's themes: registered from TOML files before the first frame, chosen from the
settings, switched by /theme and the palette, and reloaded when a theme file is saved.

A base class of `MyrmApp` (tui/app.py) so the app module keeps to the app's lifetime and
sessions; it holds no state of its own beyond what the app hands it in `__init__`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App

from myrm_tui.settings import Settings
from myrm_tui.settings.schema import SPECS_BY_KEY
from myrm_tui.tui.scope import theme_note
from myrm_tui.tui.theming.theme_files import (
    THEME_SUFFIX,
    ThemeFileError,
    css_problem,
    load_theme_file,
    load_themes,
    shipped_theme_dir,
    theme_dirs,
)

if TYPE_CHECKING:
    from myrm_tui.tui.session.chat_session import ChatSession

DEFAULT_THEME = SPECS_BY_KEY["theme"].default


class ThemedApp(App[None]):
    """Theme handling shared by the app; `MyrmApp` sets these attributes in its `__init__`."""

    settings: Settings
    chat: ChatSession
    chat_opened: bool
    theme_dirs: list[Path] | None
    theme_problems: list[str]
    theme_files: dict[str, Path]
    _theme_stop: asyncio.Event
    _saving_theme: bool

    def _theme_dirs(self) -> list[Path]:
        return self.theme_dirs if self.theme_dirs is not None else theme_dirs()

    def _choose_start_theme(self) -> list[tuple[str, str, float | None]]:
        """Set the settings' theme, or the default when it is missing or broken; the warnings to
        show once the app runs, as (text, title, timeout)."""
        theme = self.settings.theme
        chosen = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else self.theme  # the fallback
        notices: list[tuple[str, str, float | None]] = []
        if theme and theme in self.available_themes:
            problem = self.theme_problem(theme)
            if problem is None:
                chosen = theme
            else:
                notices.append((f"{problem} Using {chosen}.", "Theme not applied", 15))
        elif theme:
            notices.append((f"Theme {theme!r} is not installed; using {chosen}. /theme lists the themes.", "", None))
        self.theme = chosen
        return notices

    def load_theme_files(self) -> None:
        loaded = load_themes(self._theme_dirs())
        for theme in loaded.themes.values():
            self.register_theme(theme)
        self.theme_files = loaded.files
        self.theme_problems = loaded.problems

    def theme_problem(self, name: str) -> str | None:
        """Why the registered theme `name` cannot be applied (its CSS variables do not parse),
        or None. Shipped themes are tested, so only the user's own files are parsed here."""
        path = self.theme_files.get(name)
        if path is None or path.parent == shipped_theme_dir():
            return None
        return css_problem(self.available_themes[name], path)

    def choose_theme(self, name: str) -> bool:
        if name not in self.available_themes:
            mine = ", ".join(sorted(n for n in self.available_themes if n.startswith("myrm")))
            self.notify(f"No theme named {name!r}; try one of {mine} (or Ctrl+P → theme).", severity="warning")
            return False
        problem = self.theme_problem(name)
        if problem is not None:
            self.notify(f"{problem} Still using {self.theme}.", title="Theme not applied", severity="error", timeout=10)
            return False
        self.theme = name
        return True

    def _theme_changed(self, theme: Any) -> None:
        """A theme picked here (/theme, the palette) is for this run only (tui/scope.py)."""
        name = theme.name
        if name == self.settings.theme:
            return
        self.settings = self.settings.with_values(theme=name)
        if self.chat_opened:  # else the session opens with self.settings, theme included
            self.chat.settings = self.chat.settings.with_values(theme=name)
        if not self._saving_theme:
            self.notify(theme_note(name, make_default=False), timeout=6)

    def reload_theme_file(self, path: Path) -> str | None:
        """Re-read one changed theme file; re-apply it if it is the active theme."""
        if not path.is_file():
            return None
        try:
            theme = load_theme_file(path)
        except ThemeFileError as exc:
            self.notify(str(exc), title="Theme not reloaded", severity="error", timeout=10)
            return None
        problem = css_problem(theme, path) if path.parent != shipped_theme_dir() else None
        if problem is not None:  # the previous version stays registered (and applied)
            self.notify(problem, title="Theme not reloaded", severity="error", timeout=10)
            return None
        self.register_theme(theme)
        self.theme_files[theme.name] = path
        if theme.name == self.theme:
            self.refresh_css(animate=False)
        return theme.name

    @work(exclusive=True, group="theme-watch", exit_on_error=False)
    async def _watch_theme_dirs(self) -> None:
        """Live reload: a saved theme file is re-registered (and re-applied if active)."""
        directories = [str(d) for d in self._theme_dirs() if d.is_dir()]
        if not directories:
            return
        await asyncio.to_thread(_load_watcher)
        import watchfiles  # loaded just above, off the UI thread

        async for changes in watchfiles.awatch(
            *directories, stop_event=self._theme_stop, rust_timeout=500, yield_on_timeout=False
        ):
            for _change, name in changes:
                if name.endswith(THEME_SUFFIX):
                    self.reload_theme_file(Path(name))


def _load_watcher() -> None:
    """Import watchfiles and the anyio backend its `awatch` picks: ~0.1 s of imports that, on the
    UI thread, would stall the frames right after the first one (the chat screen's)."""
    import anyio._backends._asyncio  # noqa: F401
    import watchfiles  # noqa: F401
