"""Reading custom command files (`<config dir>/commands/NAME.md`, the workspace's
`.myrm/commands/NAME.md`): which files count, their front matter and their text.

Why in settings: a workspace command's `model` decides where a message goes, so the workspace's
trust covers it (settings/config_files/loader.py lists it and settings/trust.py digests it), and the loader
sits below the TUI that runs the commands (tui/prompt/custom_commands.py). Both read the files here, so
what trust was given for is exactly what runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from myrm_tui.fenced_files import FenceError
from myrm_tui.fenced_paths import read_inside, read_users_own
from myrm_tui.settings.paths import WORKSPACE_DIR_NAME

COMMANDS_FOLDER = "commands"
# The name is the file's stem; the same shape a built-in command has (letters, digits, - and _).
COMMAND_NAME = re.compile(r"^[A-Za-z][\w-]*$")
# 64 KB of prompt text is far beyond any real command; a bigger file is a mistake (or a dump
# someone dropped in the folder) and would be sent whole on every use.
MAX_COMMAND_BYTES = 64 * 1024
# More files than this in one folder are not all meant as commands; the popup stays usable.
MAX_COMMANDS_PER_FOLDER = 200
FRONT_MATTER_KEYS = ("description", "argument-hint", "model")


def workspace_commands_dir(workspace: Path) -> Path:
    return Path(workspace) / WORKSPACE_DIR_NAME / COMMANDS_FOLDER


def front_matter(text: str, path: Path, problems: list[str]) -> tuple[dict[str, str], str]:
    """(keys, body) of a command file; the front matter is `key: value` lines between `---`."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1 or text[end + 4 : end + 5] not in ("", "\n"):
        problems.append(f"{path}: the front matter opened with --- is never closed; it is read as text")
        return {}, text
    keys: dict[str, str] = {}
    for number, line in enumerate(text[4:end].split("\n"), start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, colon, value = stripped.partition(":")
        key = key.strip().lower().replace("_", "-")
        if not colon:
            problems.append(f"{path}:{number}: {stripped!r} is not `key: value`; ignored")
            continue
        if key not in FRONT_MATTER_KEYS:
            problems.append(
                f"{path}:{number}: `{key}` is not a command setting ({', '.join(FRONT_MATTER_KEYS)}); ignored"
            )
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        keys[key] = value
    return keys, text[end + 4 :].lstrip("\n")


def read_command_folder(
    folder: Path, problems: list[str], workspace: Path | None = None
) -> Iterator[tuple[Path, dict[str, str], str]]:
    """(path, front matter, body) of each command file the folder holds, in name order; a file
    that cannot be a command is skipped with one sentence in `problems`.

    `workspace`: the folder is the repository's, so each file is read under its fence
    (fenced_paths.read_inside): a committed `hi.md` linked to ~/.ssh/id_rsa is refused, not sent
    as the prompt. The user's own folder (None) may hold links."""
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".md")
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        problems.append(f"{folder}: cannot list it ({exc.strerror or exc})")
        return
    if len(files) > MAX_COMMANDS_PER_FOLDER:
        problems.append(f"{folder}: {len(files)} files; only the first {MAX_COMMANDS_PER_FOLDER} are loaded")
        files = files[:MAX_COMMANDS_PER_FOLDER]
    for path in files:
        if not COMMAND_NAME.match(path.stem):
            problems.append(
                f"{path}: `{path.stem}` cannot be a command name (letters, digits, - and _, starting with a letter)"
            )
            continue
        try:
            if workspace is None:
                data = read_users_own(path, limit=MAX_COMMAND_BYTES)
            else:
                data = read_inside(workspace, path, limit=MAX_COMMAND_BYTES)
        except FenceError as exc:
            if not path.is_dir():  # a sub-folder named x.md is simply not a command, as before
                problems.append(f"{path}: not loaded ({exc})")
            continue
        except OSError as exc:
            problems.append(f"{path}: cannot read it ({exc.strerror or exc})")
            continue
        if data is None:
            continue
        if len(data) > MAX_COMMAND_BYTES:
            problems.append(f"{path}: over {MAX_COMMAND_BYTES // 1024} KB; not loaded")
            continue
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        keys, body = front_matter(text, path, problems)
        body = body.strip("\n")
        if not body.strip():
            problems.append(f"{path}: the command has no text to send; not loaded")
            continue
        yield path, keys, body


def workspace_command_models(workspace: Path) -> tuple[tuple[str, str, Path], ...]:
    """(command, model, file) for each workspace command that names a model: what the
    workspace's trust covers of its commands (their text is prompt text, read without asking)."""
    found = []
    for path, keys, _body in read_command_folder(workspace_commands_dir(workspace), [], workspace):
        model = keys.get("model", "").strip()
        if model:
            found.append((f"/{path.stem}", model, path))
    return tuple(found)
