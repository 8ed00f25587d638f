"""What the chat does when told to: the handlers the command table names, custom commands, F1.

Dispatch is a lookup, not a chain of names: a slash command finds its row in the command table
(tui/prompt/command_table.py) and its row names the handler here; keys and palette entries name the
handler directly. Custom commands (Markdown files, tui/prompt/custom_commands.py) are re-read whenever a
command is typed, so a file added or edited while myrm runs is offered at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

from textual.app import SystemCommand
from textual.binding import BindingsMap

from myrm_tui.agent.user_input.attachments import AttachmentError, named_outside
from myrm_tui.tui.key_help import BoundKey, key_rows, key_table
from myrm_tui.tui.prompt.command_table import BY_HANDLER, COMMANDS
from myrm_tui.tui.prompt.custom_commands import CustomCommands, command_model, load_custom_commands, workspace_trusted
from myrm_tui.tui.prompt.image_input import describe
from myrm_tui.tui.prompt.palette import PaletteState, custom_commands, table_commands
from myrm_tui.tui.prompt.slash_commands import SLASH_COMMANDS, SlashCommand, alphabetical, parse_command, with_custom
from myrm_tui.tui.scope import parse_scoped
from myrm_tui.tui.screens.chat.edit_queue import EditQueue
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.session.turn_runner import TurnRunner
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.tool_block import ToolHeader

_HANDLER_BY_NAME = {command.name: command.handler for command in COMMANDS if command.name}


def _dialogs() -> ModuleType:
    """The dialog flows, imported on first use: they bring every dialog screen (health,
    sessions, settings, model picker; ~0.1 s) and none is on the first frame."""
    from myrm_tui.tui.screens.chat import dialogs as chat_dialogs

    return chat_dialogs


class ChatCommands:
    def __init__(self, screen: ChatParts, runner: TurnRunner, edits: EditQueue) -> None:
        self.screen = screen
        self.runner = runner
        self.edits = edits
        self.custom = CustomCommands()  # custom slash commands (re-read when a command is typed)

    def run(self, name: str, argument: str = "") -> None:
        """A slash command by name (also what the palette calls for custom commands)."""
        handler = _HANDLER_BY_NAME.get(name)
        if handler is not None:
            self.run_handler(handler, argument)
        elif self.custom.get(name) is not None:  # the palette runs custom commands here
            self.run_custom(name, argument, draft=None)

    def submitted(self, text: str) -> bool:
        """Enter with `text`: True when it was a slash command (run, sent or refused as unknown)."""
        parsed = parse_command(text, self.slash())
        if parsed is None:
            return False
        screen = self.screen
        if parsed.command is None:
            screen.notify(f"Unknown command {parsed.name}; /help lists them.", severity="warning")
        elif parsed.command.source:  # a custom command: its text goes as the message
            self.run_custom(parsed.command.name, parsed.argument, draft=text)
        else:
            screen.prompt.prompt_history.add(text)
            screen.prompt.take_submitted(text)
            self.run(parsed.command.name, parsed.argument)
        return True

    def run_handler(self, handler: str, argument: str = "") -> None:
        """A command table row's handler (keys, the palette and slash commands end here)."""
        if handler not in BY_HANDLER:
            raise KeyError(f"no command table row names the handler {handler!r}")
        getattr(self, handler)(argument)

    def palette(self) -> Iterator[SystemCommand]:
        """The palette's entries for the chat as it is now (tui/prompt/palette.py)."""
        screen = self.screen
        state = PaletteState(screen.chat.session is not None, screen.panel_shown, screen.chat.model)
        yield from table_commands(state, self.run_handler)
        self.reload()
        yield from custom_commands(self.custom.commands, self.run)

    # handlers (tui/prompt/command_table.py names them) ---------------------------------------------

    def compact(self, focus: str) -> None:
        screen = self.screen
        if screen.busy():
            return
        if screen.chat.session is None:
            screen.notify(_dialogs().NOTHING_YET.format(what="compact"), severity="warning")
            return
        if screen.chat.model is None:
            screen.notify("No model is configured; compaction needs one.", severity="warning")
            return
        self.runner.compact(focus or None)

    def fork(self, _argument: str) -> None:
        _dialogs().fork(self.screen)

    def undo(self, _argument: str) -> None:
        # imported on use: agent.undo pulls in the checkpoints and the tool registry (~0.1 s),
        # which the first frame does not need
        from myrm_tui.tui.screens.chat import undo_flow

        undo_flow.start_undo(self.screen)

    def rewind(self, _argument: str) -> None:
        from myrm_tui.tui.screens.chat import undo_flow

        undo_flow.start_rewind(self.screen)

    def retry(self, _argument: str) -> None:
        self.edits.retry()

    def model(self, argument: str) -> None:
        if argument:
            _dialogs().switch_model(self.screen, parse_scoped(argument))
        else:
            _dialogs().pick_model(self.screen)

    def sessions(self, _argument: str) -> None:
        _dialogs().sessions(self.screen)

    def settings(self, _argument: str) -> None:
        _dialogs().settings(self.screen)

    def image(self, path: str) -> None:
        """`/image PATH`: checked now, sent with the next message."""
        screen = self.screen
        try:
            # fenced like file_read, unless the user typed a full path themselves (attachments.py)
            allow = bool(screen.chat.settings.allow_outside_workspace) or named_outside(path)
            image = screen.images.add(path, screen.chat.workspace, allow_outside=allow)
        except AttachmentError as exc:
            screen.notify(str(exc), title="Image not attached", severity="error", timeout=8)
            return
        screen.transcript.mount(Note(f"{describe(image)} goes with your next message"))

    def export(self, argument: str) -> None:
        _dialogs().export(self.screen, argument)

    def copy(self, _argument: str) -> None:
        _dialogs().copy_last_reply(self.screen)

    def notes(self, _argument: str) -> None:
        _dialogs().show_notes(self.screen)

    def mcp(self, _argument: str) -> None:
        _dialogs().mcp(self.screen)

    def jobs(self, argument: str) -> None:
        _dialogs().jobs(self.screen, argument)

    def theme(self, argument: str) -> None:
        if argument:
            self.screen.myrm.choose_theme_scoped(parse_scoped(argument))
        else:
            self.screen.app.search_themes()

    def new_session(self, _argument: str) -> None:
        _dialogs().new_session(self.screen)

    def help(self, _argument: str) -> None:
        _dialogs().show_help(self.screen, self.help_markdown())

    def toggle_panel(self, _argument: str) -> None:
        self.screen.set_panel(not self.screen.panel_shown)

    def health(self, _argument: str) -> None:
        _dialogs().health(self.screen)

    # custom commands ------------------------------------------------------------------------

    def reload(self, announce: bool = False) -> None:
        """Re-read the command folders (cheap: two small folders). `announce`: say what was not
        loaded (at start)."""
        from myrm_tui.settings.paths import user_config_dir

        screen = self.screen
        self.custom = load_custom_commands(screen.chat.workspace, user_config_dir(), [c.name for c in SLASH_COMMANDS])
        if announce and self.custom.problems:
            screen.transcript.mount(
                Note(
                    "Custom commands: " + "; ".join(self.custom.problems),
                    "warning",
                    "F1 lists the commands that were loaded.",
                )
            )

    def slash(self) -> tuple[SlashCommand, ...]:
        return tuple(SlashCommand(c.name, c.argument_hint, c.help, str(c.path)) for c in self.custom.commands)

    def run_custom(self, name: str, argument: str, *, draft: str | None) -> None:
        """`/NAME args`: the command file's text, arguments substituted, goes as the message; its
        `model` (when it may apply: custom_commands.command_model) answers this one message."""
        from myrm_tui.settings.paths import user_config_dir

        screen = self.screen
        command = self.custom.get(name)
        if command is None:
            screen.notify(f"{name} is gone from the commands folders.", severity="warning")
            return
        trusted = workspace_trusted(screen.chat.workspace, user_config_dir()) if command.model else False
        model, refused = command_model(command, trusted)
        if refused:
            screen.transcript.mount(Note(refused, "warning"))
        shown = command.path.name if command.scope == "user" else f".myrm/commands/{command.path.name}"
        note = f"{command.name} from {shown}" + (f" · model {model}" if model else "")
        screen.send_message(command.expand(argument), draft=draft, model=model or None, note=note)

    # F1 -------------------------------------------------------------------------------------

    def help_markdown(self) -> str:
        """Generated from the bindings (the keymap setting applied) and the slash commands."""
        screen = self.screen
        keymap = {k: v for k, v in screen.myrm.settings.keymap.items()}
        bound: list[BoundKey] = []
        for bindings in (
            type(screen.prompt).BINDINGS,
            type(screen).BINDINGS,
            ApprovalPrompt.BINDINGS,
            ToolHeader.BINDINGS,
            type(screen.app).BINDINGS,
        ):
            mapped = BindingsMap(bindings)
            if keymap:
                mapped.apply_keymap(keymap)
            bound += [
                BoundKey(binding.id, binding.description, key)
                for key, binding in mapped
                if binding.id and binding.description
            ]
        palette = getattr(screen.app, "COMMAND_PALETTE_BINDING", "ctrl+p")
        if not any(item.binding_id == "app.command_palette" for item in bound):
            bound.append(BoundKey("app.command_palette", "Command palette", palette))
        lines = key_table(key_rows(bound))
        lines += [
            "",
            'Rebind any key with `[keymap]` in the config: `"chat.fork" = "f6"`.',
            "",
            "| command | what it does |",
            "|---|---|",
        ]
        lines += [
            f"| `{f'{c.name} {c.args}'.rstrip()}` | {c.help.replace('|', '/')} |"
            for c in alphabetical(with_custom(self.slash()))
        ]
        if self.custom.problems:
            lines += ["", "Custom commands not loaded:", ""] + [f"- {problem}" for problem in self.custom.problems]
        return "\n".join(lines)
