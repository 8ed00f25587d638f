"""Paths no tool may write, whatever the approval policy: the one list every write gate reads.

Why these: each one turns a file write into more power than the write itself. `.myrm/` holds the
workspace config (approval policy, endpoints) and the store the engine trusts; `.git/` holds hooks
and config that git executes on the user's next command; the user's config dir holds the trusted
settings, the trust decisions and allow-rules; shell startup files run on the user's next
terminal, and ~/.gitconfig, ~/.ssh run commands or grant logins. A model steered by a file it
read must not be able to reach any of them, so file tools refuse them and the sandboxed shell
sees them read-only.

Matching is on resolved paths (a symlink or `../` reaches the same entry) and ignores case, so a
case-insensitive filesystem cannot be used to spell `.GIT/hooks` past the check. A folder named
`.git` or `.myrm` is protected wherever it is: a nested repository's hooks or a submodule's git
dir run just the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.fenced_files import open_root
from myrm_tui.settings.paths import CONFIG_DIR_ENV, WORKSPACE_DIR_NAME, user_config_dir

GIT_DIR_NAME = ".git"
# A worktree's `.git` file is one line ("gitdir: PATH"); more than this is not one.
MAX_GITDIR_FILE_BYTES = 8192
# Folders protected wherever they appear, with the phrase the refusal uses.
PROTECTED_DIR_NAMES = {
    WORKSPACE_DIR_NAME: "myrm's config and store",
    GIT_DIR_NAME: "git's hooks and config, which git runs",
}
WORKSPACE_PROTECTED_DIRS = tuple(PROTECTED_DIR_NAMES)

# Startup files in $HOME that a shell or a login session executes (bash, zsh, sh, fish).
SHELL_STARTUP_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
)
SHELL_STARTUP_DIRS = (".config/fish",)
# Files in $HOME that make other programs run commands or let someone in: git aliases and
# hooksPath, ssh config (ProxyCommand) and authorized_keys.
HOME_COMMAND_FILES = (".gitconfig", ".config/git", ".ssh")
# What a login session starts (the same list the shell's command rules use).
LOGIN_STARTUP = (
    ".config/systemd",
    ".config/autostart",
    ".local/share/systemd",
    ".pam_environment",
    ".xprofile",
    ".xinitrc",
    ".xsession",
)
# The same config folders under $XDG_CONFIG_HOME when it moves them out of ~/.config.
XDG_COMMAND_DIRS = ("fish", "git")


@dataclass(frozen=True)
class ProtectedPath:
    path: Path
    why: str  # one phrase for the refusal sentence ("the workspace's myrm config and store")


def _resolved(text: str) -> Path:
    return Path(text).expanduser().resolve()


def protected_paths(workspace: Path, env: Mapping[str, str] | None = None) -> tuple[ProtectedPath, ...]:
    """Every protected path, resolved, for this workspace and user (folders and files alike)."""
    source = os.environ if env is None else env
    root = workspace.resolve()
    items = [
        ProtectedPath(root / WORKSPACE_DIR_NAME, "the workspace's myrm config and store"),
        ProtectedPath(root / GIT_DIR_NAME, "git's hooks and config, which git runs"),
        ProtectedPath(user_config_dir(source).expanduser().resolve(), "your myrm user config"),
    ]
    if source.get(CONFIG_DIR_ENV, "").strip():
        # The platform folder holds the user's config too when MYRM_CONFIG_DIR points elsewhere.
        platform_env = {k: v for k, v in source.items() if k != CONFIG_DIR_ENV}
        items.append(ProtectedPath(user_config_dir(platform_env).resolve(), "your myrm user config"))
    git_dir = _linked_git_dir(root)
    if git_dir is not None:
        items.append(ProtectedPath(git_dir, "git's hooks and config, which git runs"))
    home = source.get("HOME", "").strip() or os.path.expanduser("~")
    if home and not home.startswith("~"):  # expanduser gives "~" back when there is no home
        home_path = _resolved(home)
        items += [ProtectedPath(home_path / name, "a shell startup file") for name in SHELL_STARTUP_FILES]
        items += [ProtectedPath(home_path / name, "a shell startup folder") for name in SHELL_STARTUP_DIRS]
        items += [
            ProtectedPath(home_path / name, "a file that makes git or ssh run commands") for name in HOME_COMMAND_FILES
        ]
        items += [ProtectedPath(home_path / name, "a program that runs at login") for name in LOGIN_STARTUP]
    xdg = source.get("XDG_CONFIG_HOME", "").strip()
    if xdg:
        items += [
            ProtectedPath(_resolved(xdg) / name, "a config folder that runs commands") for name in XDG_COMMAND_DIRS
        ]
    return tuple(items)


def _linked_git_dir(root: Path) -> Path | None:
    """A worktree's or submodule's `.git` is a file naming the real git dir ("gitdir: …")."""
    # Read without following: a command can put a `.git` link to any file here (to the store's
    # -shm, whose descriptor closed in this process would drop SQLite's locks: fenced_files.HeldFiles).
    try:
        with open_root(root) as folder:
            data = folder.read_if_file(GIT_DIR_NAME, limit=MAX_GITDIR_FILE_BYTES)
    except OSError:
        return None
    if data is None:
        return None
    first = data.decode("utf-8", errors="replace").splitlines()[:1]
    if not first or not first[0].startswith("gitdir:"):
        return None
    target = Path(first[0].removeprefix("gitdir:").strip())
    return (target if target.is_absolute() else root / target).resolve()


def _within(path: Path, base: Path) -> bool:
    """`path` is `base` or under it, ignoring case (see the module docstring)."""
    parts, base_parts = path.parts, base.parts
    if len(parts) < len(base_parts):
        return False
    return all(a.casefold() == b.casefold() for a, b in zip(parts, base_parts, strict=False))


def protection_of(path: Path, workspace: Path, env: Mapping[str, str] | None = None) -> ProtectedPath | None:
    """The protected entry that covers `path` (already resolved), or None when writing is allowed."""
    for item in protected_paths(workspace, env):
        if _within(path, item.path):
            return item
    for index, part in enumerate(path.parts):
        why = PROTECTED_DIR_NAMES.get(part.casefold())
        if why is not None:
            return ProtectedPath(Path(*path.parts[: index + 1]), why)
    return None


def refusal(raw: str, item: ProtectedPath, resolved: Path | None = None) -> str:
    """The one sentence the model gets when a write hits a protected path."""
    via = f" (it resolves to {resolved})" if resolved is not None and str(resolved) != raw else ""
    return (
        f"{raw}{via} is protected as {item.why}, so no tool may write there whatever the "
        "approval policy; if the change is needed, ask the user to make it themselves."
    )
