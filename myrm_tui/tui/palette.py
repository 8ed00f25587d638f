"""Command palette (Ctrl+P) entries that depend on where the user is.

Built from the chat screen's state each time the palette opens: "Compact now" and "Export"
only when a session exists, "Fork" only when it has messages, the panel entry says whether it
will show or hide. Each entry calls the same action the key or slash command would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider

from myrm_tui.terminal_text import for_terminal

# Textual's own palette entries myrm does not offer. "Screenshot" wrote the whole visible
# transcript (pasted keys included) to an SVG in the downloads folder, past the redaction sinks
# every other export goes through (sinks.py), and only a toast said where; the README's
# screenshots come from the snapshot tests instead.
REMOVED_SYSTEM_COMMANDS = frozenset({"Screenshot"})


def system_commands(commands: Iterable[SystemCommand]) -> Iterator[SystemCommand]:
    """Textual's system commands minus REMOVED_SYSTEM_COMMANDS."""
    return (command for command in commands if command.title not in REMOVED_SYSTEM_COMMANDS)


class MyrmCommands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from myrm_tui.tui.screens.chat import ChatScreen

        screen = self.screen
        if not isinstance(screen, ChatScreen):
            return []
        has_session = screen.chat.session is not None
        panel = "Hide" if screen.panel.display else "Show"
        commands: list[tuple[str, Callable[[], object], str]] = []
        if has_session:
            commands.append(("Compact now", screen.action_compact, "Compact the context of this session now"))
            commands.append(("Fork session", screen.action_fork, "Continue in a new session sharing this history"))
            commands.append(
                (
                    "Retry the last answer",
                    screen.action_retry,
                    "Ask the last message again in a fork; this session stays as it is",
                )
            )
            commands.append(
                (
                    "Export session to Markdown",
                    partial(screen.export, ""),
                    "Write this session to a Markdown file in the workspace",
                )
            )
        commands += [
            ("Switch model", screen.action_switch_model, f"Now: {screen.chat.model or 'none'}"),
            (f"{panel} compaction panel", screen.action_toggle_panel, "Compactions, cache and breakers"),
            ("Context health", screen.action_health, "Every context metric of this session"),
            ("Sessions", screen.action_sessions, "Resume, rename, delete, export"),
            ("Settings", screen.action_settings, "Edit and save the settings"),
            ("New session", screen.new_session, "Start fresh; this session stays in Sessions"),
        ]
        # Custom commands (Markdown files): run without arguments from here; type /NAME args for more.
        screen.reload_custom_commands()
        for custom in screen.custom.commands:
            title = f"{custom.name}{' — ' + custom.description if custom.description else ''}"
            commands.append(
                (for_terminal(title), partial(screen.run_command, custom.name, ""), for_terminal(custom.help))
            )  # a workspace file wrote these
        app = self.app
        for name in sorted(app.available_themes):
            if name.startswith("myrm"):
                choose = getattr(app, "choose_theme", None)
                if choose is not None:
                    commands.append((f"Theme: {name}", partial(choose, name), "Switch and remember the theme"))
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
