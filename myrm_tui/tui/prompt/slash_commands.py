"""The slash commands the prompt understands (pure: the popup, /help and tests read this).

Built-in commands are the slash rows of tui/prompt/command_table.py; custom commands (Markdown
files, tui/prompt/custom_commands.py) join them as `SlashCommand`s with their file as `source`,
after the built-ins, so the popup, the palette, F1 and the parser read one list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from myrm_tui.tui.prompt.command_table import COMMANDS


@dataclass(frozen=True)
class SlashCommand:
    name: str  # with the slash
    args: str  # argument hint shown in the popup ("" for none)
    help: str
    source: str = ""  # a custom command's file ("" for a built-in)


# The built-ins come from the one command table (tui/prompt/command_table.py), in its order.
SLASH_COMMANDS: tuple[SlashCommand, ...] = tuple(SlashCommand(c.name, c.args, c.help) for c in COMMANDS if c.name)
BY_NAME = {command.name: command for command in SLASH_COMMANDS}

# A lone "/word" is meant as a command; "/usr/bin is missing" (a path) is a message.
_COMMAND_LIKE = re.compile(r"/[A-Za-z][\w-]*")


@dataclass(frozen=True)
class ParsedCommand:
    command: SlashCommand | None  # None: looks like a command but is not one
    name: str
    argument: str


def with_custom(custom: Sequence[SlashCommand] = ()) -> tuple[SlashCommand, ...]:
    """The built-in commands, then the custom ones whose names no built-in has."""
    return SLASH_COMMANDS + tuple(c for c in custom if c.name.lower() not in BY_NAME)


def alphabetical(commands: Sequence[SlashCommand]) -> tuple[SlashCommand, ...]:
    """The order the popup and F1 list commands in: by name, so a command is where you look for it."""
    return tuple(sorted(commands, key=lambda command: command.name.lower()))


def popup_order(query: str, names: Sequence[str]) -> list[str]:
    """Every command that matches what was typed after "/": those starting with it first, then
    the looser (fuzzy) matches, each group alphabetically. Not by length: a bare "/" lists every
    command from A to Z, and "/co" puts /compact before /copy."""
    from myrm_tui.tui.prompt.fuzzy import fuzzy_score

    typed = query.lower()
    ordered = sorted(names, key=str.lower)
    prefix = [name for name in ordered if name.lower().startswith(typed)]
    rest = [name for name in ordered if name not in prefix and fuzzy_score(query, name) is not None]
    return prefix + rest


def parse_command(text: str, custom: Sequence[SlashCommand] = ()) -> ParsedCommand | None:
    """A slash command and its argument, or None when the text is an ordinary message."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, _, rest = stripped.partition(" ")
    if "\n" in head:
        head, _, more = head.partition("\n")
        rest = f"{more} {rest}".strip()
    if not _COMMAND_LIKE.fullmatch(head):
        return None
    known = BY_NAME.get(head.lower()) or next((c for c in custom if c.name.lower() == head.lower()), None)
    return ParsedCommand(known, head, rest.strip())
