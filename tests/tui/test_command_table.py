"""The command table drives the slash popup, the palette, F1 and the keys: every row is reachable."""

from __future__ import annotations

from textual.binding import Binding

from myrm_tui.tui.prompt.command_table import COMMANDS
from myrm_tui.tui.prompt.slash_commands import SLASH_COMMANDS
from myrm_tui.tui.screens.chat.commands import ChatCommands
from myrm_tui.tui.screens.chat.screen import ChatScreen


def test_every_handler_the_table_names_exists():
    for command in COMMANDS:
        assert callable(getattr(ChatCommands, command.handler, None)), command.handler


def test_every_binding_the_table_names_runs_its_handler():
    bindings = {b.id: b for b in ChatScreen.BINDINGS if isinstance(b, Binding)}
    for command in COMMANDS:
        if command.binding_id:
            assert bindings[command.binding_id].action == f"command('{command.handler}')", command.binding_id
    table_actions = {f"command('{c.handler}')" for c in COMMANDS}
    for binding in bindings.values():
        if binding.action.startswith("command("):
            assert binding.action in table_actions, binding.id


def test_the_slash_commands_are_the_table_rows_with_a_name():
    assert [c.name for c in SLASH_COMMANDS] == [c.name for c in COMMANDS if c.name]
    assert len({c.handler for c in COMMANDS}) == len(COMMANDS)
