"""What the chat screen and its helpers ask of the app they run in: the settings, the MCP servers,
opening a session, applying and saving settings, the theme.

Why a Protocol and not `MyrmApp`: the app imports the chat screen to show it, so the screen naming
the app's class, even for the type checker only, made an import cycle (app → screens.chat → app);
the screen needs only these members, and `MyrmApp` has them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from myrm_tui.mcp.manager import McpManager
from myrm_tui.settings.settings import Settings
from myrm_tui.tui.scope import ScopedChoice


class ChatHost(Protocol):
    settings: Settings
    mcp: McpManager

    @property
    def config_path(self) -> Path: ...

    def open_session(self, session_id: str | None, notice: str = "", model: str | None = None) -> None: ...

    def apply_settings(self, settings: Settings) -> None: ...

    async def save_settings(self, changes: Mapping[str, Any]) -> bool: ...

    def choose_theme_scoped(self, choice: ScopedChoice) -> None: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...
