"""Custom slash commands: Markdown files whose text becomes the message (pure: no Textual).

Where they come from: `<config dir>/commands/NAME.md` (the user's own, every workspace) and the
workspace's `.myrm/commands/NAME.md` (the repository's). `/NAME args` sends the file's text with
`$ARGUMENTS` replaced by everything after the name and `$1` … `$9` by its words (shell-style
quoting groups words); a file with neither gets the arguments appended after a blank line, so
nothing typed is dropped. Optional front matter between `---` lines: `description` (the popup,
the palette and F1 show it), `argument-hint` (shown after the name), `model` (the message goes
to that model; the next one goes back).

Why a workspace command is believed only so far: its text is prompt text the user chooses to
send by typing its name, like a snippet they could have pasted, so it is read without asking
(as the peers read AGENTS.md). Its `model`, though, decides where the conversation goes (and
who bills for it), exactly like the `model` setting of `.myrm/config.toml`: it applies only
when the user trusts the workspace (`myrm trust`, or `--trust` for one `myrm run`); otherwise
the message goes to the current model and the user is told why.

Name clashes: a built-in command always wins (the file is not loaded, and F1 and a note say so);
between a user and a workspace command of the same name the user's own wins (a cloned repository
cannot replace a command the user wrote), and that is reported too.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.settings.config_files.command_files import COMMANDS_FOLDER, read_command_folder, workspace_commands_dir

WORKSPACE, USER = "workspace", "user"
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


@dataclass(frozen=True)
class CustomCommand:
    name: str  # with the slash, as typed
    description: str
    argument_hint: str
    model: str  # "" : the session's model
    body: str
    path: Path
    scope: str  # WORKSPACE or USER

    def expand(self, arguments: str) -> str:
        """The message this command sends for `arguments`."""
        arguments = arguments.strip()
        if not _PLACEHOLDER.search(self.body):
            return f"{self.body}\n\n{arguments}" if arguments else self.body
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unbalanced quote: plain words
            words = arguments.split()

        def value(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return arguments
            index = int(key) - 1
            return words[index] if index < len(words) else ""

        return _PLACEHOLDER.sub(value, self.body)

    @property
    def help(self) -> str:
        where = ".myrm/commands" if self.scope == WORKSPACE else "your commands folder"
        return f"{self.description or 'custom command'} (custom, {where})"


@dataclass(frozen=True)
class CustomCommands:
    commands: tuple[CustomCommand, ...] = ()
    problems: tuple[str, ...] = ()  # files not loaded and clashes, one sentence each

    def get(self, name: str) -> CustomCommand | None:
        lowered = name.lower()
        return next((c for c in self.commands if c.name.lower() == lowered), None)


def _read_folder(folder: Path, scope: str, problems: list[str], workspace: Path | None = None) -> list[CustomCommand]:
    """The folder's commands, read by settings/config_files/command_files.py (the reader the workspace's trust
    digest uses too); `workspace` fences the repository's own folder (no link out of it)."""
    return [
        CustomCommand(
            f"/{path.stem}",
            " ".join(keys.get("description", "").split()),
            " ".join(keys.get("argument-hint", "").split()),
            keys.get("model", "").strip(),
            body,
            path,
            scope,
        )
        for path, keys, body in read_command_folder(folder, problems, workspace)
    ]


def load_custom_commands(workspace: Path, user_dir: Path, builtin: Iterable[str]) -> CustomCommands:
    """Every custom command in force here, sorted by name, and what was left out and why."""
    problems: list[str] = []
    taken = {name.lower() for name in builtin}
    chosen: dict[str, CustomCommand] = {}
    for command in _read_folder(user_dir / COMMANDS_FOLDER, USER, problems) + _read_folder(
        workspace_commands_dir(workspace), WORKSPACE, problems, workspace
    ):
        key = command.name.lower()
        if key in taken:
            problems.append(
                f"{command.path}: {command.name} is a built-in command; the built-in one runs, "
                "this file is not loaded (rename it)"
            )
            continue
        if key in chosen:
            problems.append(
                f"{command.path}: {command.name} is also one of your own commands ({chosen[key].path}); yours runs"
            )
            continue
        chosen[key] = command
    return CustomCommands(tuple(sorted(chosen.values(), key=lambda c: c.name.lower())), tuple(problems))


def workspace_trusted(workspace: Path, user_dir: Path) -> bool:
    """Whether the user trusts this workspace as its files are now (a stored `myrm trust`
    decision for the current `.myrm/config.toml`, `.mcp.json`, output filters and command
    models, settings/trust.py's digest). A workspace without any of them has nothing to trust,
    so it never is."""
    from myrm_tui.settings import trust as T
    from myrm_tui.settings.config_files.command_files import workspace_command_models
    from myrm_tui.settings.config_files.filter_files import workspace_filter_bytes
    from myrm_tui.settings.config_files.layers import read_workspace_file
    from myrm_tui.settings.config_files.mcp_entries import workspace_mcp_json
    from myrm_tui.settings.paths import workspace_config_file

    def read(path: Path) -> bytes | None:  # as the loader reads it (no link out, capped)
        return read_workspace_file(workspace, path)[0]

    config, mcp_json = read(workspace_config_file(workspace)), read(workspace_mcp_json(workspace))
    filters = workspace_filter_bytes(workspace)
    commands = T.command_pairs(workspace_command_models(workspace))
    if config is None and mcp_json is None and not filters and not commands:
        return False
    try:
        digest = T.workspace_digest(config, mcp_json, filters, commands)
        return T.stored_decision(user_dir, workspace, digest) is not None
    except T.TrustStoreError:
        return False


def command_model(command: CustomCommand, trusted: bool) -> tuple[str, str]:
    """(model for this message or "", a note for the user or ""). A workspace command's model
    needs the workspace's trust (see the module doc)."""
    if not command.model:
        return "", ""
    if command.scope == USER or trusted:
        return command.model, ""
    return "", (
        f"{command.name} asks for the model {command.model}, but it comes from this workspace, which "
        "you have not trusted; the message goes to the current model (`myrm trust` to allow it)."
    )
