"""Command palette (Ctrl+P) entries, fed through Textual's `App.get_system_commands`.

Built from the command table (tui/prompt/command_table.py) and the chat's state each time the palette
opens: entries marked `needs_session` only when a session exists, the panel entry says whether it
will show or hide, the model entry names the current model. Each entry calls the same handler the
key or slash command would. Why system commands and not a Provider of our own: a Provider had to
import the chat screen to read its state (app → palette → chat), and the app already knows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from textual.app import SystemCommand

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.prompt.command_table import COMMANDS
from myrm_tui.tui.prompt.custom_commands import CustomCommand

# Textual's own palette entries myrm does not offer. "Screenshot" wrote the whole visible
# transcript (pasted keys included) to an SVG in the downloads folder, past the redaction sinks
# every other export goes through (sinks.py), and only a toast said where; the README's
# screenshots come from the snapshot tests instead.
REMOVED_SYSTEM_COMMANDS = frozenset({"Screenshot"})


@dataclass(frozen=True)
class PaletteState:
    """What the entries depend on, read from the chat when the palette opens."""

    has_session: bool
    panel_shown: bool
    model: str | None


def system_commands(commands: Iterable[SystemCommand]) -> Iterator[SystemCommand]:
    """Textual's system commands minus REMOVED_SYSTEM_COMMANDS."""
    return (command for command in commands if command.title not in REMOVED_SYSTEM_COMMANDS)


def table_commands(state: PaletteState, run: Callable[[str, str], object]) -> Iterator[SystemCommand]:
    """The command table's palette entries; `run(handler, argument)` runs one (no argument here)."""
    for command in COMMANDS:
        entry = command.palette
        if entry is None or (entry.needs_session and not state.has_session):
            continue
        title = entry.title.format(panel="Hide" if state.panel_shown else "Show")
        yield SystemCommand(title, entry.help.format(model=state.model or "none"), partial(run, command.handler, ""))


def custom_commands(commands: Iterable[CustomCommand], run: Callable[[str, str], object]) -> Iterator[SystemCommand]:
    """Custom commands (Markdown files) run without arguments from here; type /NAME args for more.
    A workspace file wrote their names and descriptions: drawn as text, escapes and all."""
    for custom in commands:
        title = f"{custom.name}{' — ' + custom.description if custom.description else ''}"
        yield SystemCommand(for_terminal(title), for_terminal(custom.help), partial(run, custom.name, ""))


def theme_commands(themes: Iterable[str], choose: Callable[[str], object]) -> Iterator[SystemCommand]:
    """One entry per myrm theme (Textual's own "Theme" entry lists every theme)."""
    for name in sorted(themes):
        if name.startswith("myrm"):
            # For this run only (app_themes._theme_changed): nothing is saved from here.
            yield SystemCommand(
                f"Theme: {name}",
                "Use this theme until you quit (/theme NAME --default keeps it)",
                partial(choose, name),
            )
