"""The Textual application and its entry point.

Only the chat screen exists for now; the app owns what is global to every screen (keymap,
theme, the store's lifetime). Nothing heavy is imported here: litellm and the agent load in a
worker after the first paint.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from myrm_tui.settings import Settings
from myrm_tui.store import Store
from myrm_tui.tui.chat_session import ChatSession
from myrm_tui.tui.screens.chat import ChatScreen


class MyrmApp(App[None]):
    TITLE = "myrm"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False, id="app.quit"),
    ]

    def __init__(self, workspace: Path, settings: Settings, session_id: str | None = None,
                 continue_last: bool = False, store: Store | None = None) -> None:
        super().__init__()
        self.workspace = Path(workspace)
        self.settings = settings
        self._owns_store = store is None
        self.store = store if store is not None else Store.open(self.workspace)
        self.chat = ChatSession.open(self.store, settings, self.workspace, session_id, continue_last)
        if not settings.animations:
            self.animation_level = "none"

    def on_mount(self) -> None:
        if self.settings.keymap:
            self.set_keymap(dict(self.settings.keymap))
        theme = self.settings.theme
        if theme and theme in self.available_themes:
            self.theme = theme
        self.push_screen(ChatScreen(self.chat))

    @property
    def chat_screen(self) -> ChatScreen:
        screen = self.screen
        assert isinstance(screen, ChatScreen)
        return screen

    def on_unmount(self) -> None:
        if self._owns_store:
            self.store.close()


def run_app(*, workspace: Path, settings: Settings, session_id: str | None = None,
            continue_last: bool = False) -> None:
    """Run the full-screen app until the user quits."""
    MyrmApp(workspace, settings, session_id=session_id, continue_last=continue_last).run()
