"""What a sandboxed command cannot read: credential stores, shell histories, other workspaces'
myrm stores, the password hashes.

Why hide and not only protect: the sandbox sees the whole file system read-only, and reading is
what a steered model needs to exfiltrate a key (through the output, or the network once a
command is allowed it). A folder is covered by an empty read-only tmpfs, a file by an empty
read-only file, so programs see "nothing there" rather than an error.

Why a list and not an empty $HOME: toolchains live in $HOME (~/.cargo, ~/.rustup, ~/.local,
~/.nvm, ~/.pyenv, ~/go, ~/.m2…) and builds must keep finding them; the list names where secrets
are kept by the common tools, and the user adds the rest (`sandbox_hide`).

The `sandbox_hide` setting (user config only: a workspace file can never un-hide): entries
separated by commas, each an absolute path or one starting with `~`; an entry starting with `!`
removes that path from the defaults (or from an earlier entry), e.g.
`sandbox_hide = "~/.config/rclone, ~/work/secrets.env, !~/.npmrc"`.

Other workspaces' `.myrm/` (sessions, vaults) cannot all be found: those the user's myrm stores
know (trust decisions, allow rules) are hidden, and so is every `.myrm` found by a bounded walk
of $HOME (HOME_SCAN_DEPTH levels, HOME_SCAN_MAX_DIRS folders), remembered for HOME_SCAN_TTL_S.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.settings.paths import CONFIG_DIR_ENV, WORKSPACE_DIR_NAME, user_config_dir

# Under $HOME: where common tools keep keys, tokens and logins, and where shells keep history.
HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".docker",
    ".kube",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".histfile",
    ".sh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".irb_history",
    ".lesshst",
)
# Readable by root only, but myrm often runs as root in containers and VMs.
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers")
# Host private keys: every /etc/ssh/ssh_host_*_key (the .pub files stay).
SSH_HOST_KEYS = Path("/etc/ssh")
# Variables naming a credential file or folder somewhere else.
SECRET_PATH_VARS = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "GNUPGHOME",
    "PASSWORD_STORE_DIR",
    "NETRC",
)
# The user's myrm stores that name workspaces (settings/trust.py, agent/permissions/rule_store.py).
WORKSPACE_LISTS = ("trusted-workspaces.json", "permission-rules.json")
# Other workspaces' `.myrm` are looked for this deep under $HOME (~/src/org/project/.myrm is 3), in
# at most this many folders: the walk runs once per HOME_SCAN_TTL_S, not per command.
HOME_SCAN_DEPTH = 4
HOME_SCAN_MAX_DIRS = 20_000
HOME_SCAN_TTL_S = 60.0
# Folders never walked for workspaces: dependencies, caches, toolchains (huge, and no one runs
# myrm in them).
_SCAN_SKIP = frozenset(
    {"node_modules", ".cache", ".cargo", ".rustup", ".npm", ".nvm", ".local", ".venv", "venv", ".git", "go", ".m2"}
)


@dataclass(frozen=True)
class Hidden:
    folders: tuple[Path, ...]
    files: tuple[Path, ...]


@dataclass(frozen=True)
class HideSetting:
    """The parsed `sandbox_hide` value: paths added, paths removed (from the defaults)."""

    add: tuple[Path, ...]
    remove: frozenset[Path]


def parse_hide(value: str, home: Path | None) -> HideSetting:
    add: list[Path] = []
    remove: set[Path] = set()
    for raw in (value or "").split(","):
        entry = raw.strip()
        negate = entry.startswith("!")
        entry = entry.removeprefix("!").strip()
        path = _expand(entry, home)
        if path is None:
            continue
        if negate:
            remove.add(path)
        else:
            add.append(path)
    return HideSetting(tuple(add), frozenset(remove))


def _expand(entry: str, home: Path | None) -> Path | None:
    if entry.startswith("~"):
        if home is None or not (entry == "~" or entry.startswith("~/")):
            return None
        entry = str(home) + entry[1:]
    if not entry.startswith("/"):
        return None
    return Path(os.path.normpath(entry))


def home_of(env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME", "").strip() or os.path.expanduser("~")
    return Path(home) if home.startswith("/") else None


def hidden_paths(workspace: Path, setting: str, env: Mapping[str, str] | None = None) -> Hidden:
    """Every existing path to hide for a command run in `workspace` (resolved; never the workspace
    or a folder that holds it, which must stay visible)."""
    source = os.environ if env is None else env
    home = home_of(source)
    wanted: list[Path] = []
    if home is not None:
        wanted += [home / name for name in HOME_SECRETS]
    wanted += [Path(p) for p in SYSTEM_SECRETS]
    wanted += _ssh_host_keys()
    for name in SECRET_PATH_VARS:
        for part in source.get(name, "").split(os.pathsep):
            if part.strip().startswith("/"):
                wanted.append(Path(part.strip()))
    config = user_config_dir(source).expanduser()
    wanted.append(config)
    if source.get(CONFIG_DIR_ENV, "").strip():
        wanted.append(user_config_dir({k: v for k, v in source.items() if k != CONFIG_DIR_ENV}))
    wanted += _listed_workspaces(config)
    if home is not None:
        wanted += _home_workspaces(home)
    parsed = parse_hide(setting, home)
    wanted += parsed.add
    removed = {_resolve(p) for p in parsed.remove} | set(parsed.remove)
    own = (workspace / WORKSPACE_DIR_NAME).resolve()
    root = workspace.resolve()
    folders: dict[Path, None] = {}
    files: dict[Path, None] = {}
    for path in wanted:
        if path in removed:
            continue
        real = _resolve(path)
        if real is None or real in removed or real == own or root == real or root.is_relative_to(real):
            continue
        if real.is_dir():
            folders[real] = None
        elif real.exists():
            files[real] = None
    return Hidden(tuple(folders), tuple(files))


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve() if (path.exists() or path.is_symlink()) else None
    except (OSError, RuntimeError):
        return None


def _ssh_host_keys() -> list[Path]:
    try:
        return [p for p in SSH_HOST_KEYS.glob("ssh_host_*_key")]
    except OSError:
        return []


def _listed_workspaces(config: Path) -> list[Path]:
    found: list[Path] = []
    for name in WORKSPACE_LISTS:
        try:
            data = json.loads((config / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        if isinstance(workspaces, dict):
            found += [Path(key) / WORKSPACE_DIR_NAME for key in workspaces if isinstance(key, str)]
    return found


def _home_workspaces(home: Path) -> tuple[Path, ...]:
    return _scan(home, int(time.monotonic() // HOME_SCAN_TTL_S))


@functools.lru_cache(maxsize=8)
def _scan(home: Path, period: int) -> tuple[Path, ...]:
    """The walk, remembered for the rest of its HOME_SCAN_TTL_S period (a cache of the file
    system keyed by the period number, so an old answer is never served past it)."""
    return tuple(_walk_for(home, WORKSPACE_DIR_NAME))


def _walk_for(root: Path, name: str) -> Iterable[Path]:
    budget = HOME_SCAN_MAX_DIRS
    level = [root]
    for _ in range(HOME_SCAN_DEPTH + 1):
        below: list[Path] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name == name:
                    yield Path(entry.path)
                    continue
                if budget > 0 and entry.name not in _SCAN_SKIP and entry.is_dir(follow_symlinks=False):
                    below.append(Path(entry.path))
                    budget -= 1
        level = below
