"""`myrm` with only the chat's own flags, started without typer.

Why a second parser: typer (with click) costs ~50 ms to import and ~60 ms to build and parse the
command tree, all before the first frame of the full-screen app, which is the launch users wait
on most. This parser accepts only the plain forms of the no-command flags (`--model X`,
`--model=X`, `-m X`, `--session`/`-s`, `--continue`/`-c`, `--approve`, `--trust`) and returns
None for anything else (a command, --help, --version, an unknown or repeated flag, a bad
`--approve` choice), which then goes to the typer CLI and its usual messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

# 128 + SIGINT; cli_commands.common has it too, but importing that here would load the settings early.
EXIT_INTERRUPTED = 130


class PlainLaunch(TypedDict):
    """The keyword arguments of cli_commands.tui.tui_command."""

    model: str | None
    session: str | None
    continue_last: bool
    approve: str | None
    trust: bool


# Flag spellings that take a value, by the tui_command argument they set.
VALUE_FLAGS = {"--model": "model", "-m": "model", "--session": "session", "-s": "session", "--approve": "approve"}
# Switches, by the tui_command argument they turn on.
SWITCHES = {"--continue": "continue_last", "-c": "continue_last", "--trust": "trust"}


def parse_plain_launch(argv: Sequence[str], approve_choices: Sequence[str]) -> PlainLaunch | None:
    """The launch's arguments, or None when typer should parse `argv` (see the module docstring)."""
    found: dict[str, str | bool] = {}
    index = 0
    while index < len(argv):
        word = argv[index]
        name, equals, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        value: str | bool
        if name in VALUE_FLAGS and (equals or index + 1 < len(argv)):
            value = inline if equals else argv[index + 1]
            if not equals and value.startswith("-"):
                return None  # click's rules for a value that looks like a flag: let it decide
            key = VALUE_FLAGS[name]
            index += 1 if equals else 2
        elif word in SWITCHES:
            key, value = SWITCHES[word], True
            index += 1
        else:
            return None
        if key in found:
            return None  # a repeated flag: typer's rule (the last wins) stays the only rule
        found[key] = value
    approve = found.get("approve")
    if approve is not None and approve not in approve_choices:
        return None
    return PlainLaunch(
        model=_text(found.get("model")),
        session=_text(found.get("session")),
        continue_last=bool(found.get("continue_last", False)),
        approve=_text(approve),
        trust=bool(found.get("trust", False)),
    )


def _text(value: str | bool | None) -> str | None:
    return value if isinstance(value, str) else None


def launch_if_plain(argv: Sequence[str]) -> int | None:
    """Run the chat for a plain launch and return its exit code; None when `argv` is not one."""
    from myrm_tui.settings.schema import SPECS_BY_KEY

    launch = parse_plain_launch(argv, SPECS_BY_KEY["approval"].choices)
    if launch is None:
        return None
    from myrm_tui import log_redaction

    log_redaction.install()  # before anything logs, as in cli.main
    try:
        from myrm_tui.cli_commands.tui import tui_command

        return tui_command(**launch)
    except KeyboardInterrupt:  # Ctrl+C while imports load, before the app took the keys
        return EXIT_INTERRUPTED
