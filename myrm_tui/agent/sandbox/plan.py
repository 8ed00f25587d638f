"""The mounts of one sandboxed command, in the order bwrap applies them (a later mount covers an
earlier one at the same place):

1. `/` read-only; a fresh /dev and /proc (its own PID namespace); empty tmpfs on /tmp and /run;
2. the toolchains that live under /tmp, read-only at the same place (sandbox/toolchains.py);
3. the workspace, writable (`workspace-write`) or read-only;
4. the protected paths inside it read-only (.git, .myrm, startup files…), a missing one covered by
   an empty read-only folder or file so it cannot be created, and nested `.git`/`.myrm` found by a
   bounded walk;
5. the hidden paths: credential stores and histories covered by an empty read-only tmpfs or file
   (sandbox/hidden.py).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.agent.permissions.protected_paths import PROTECTED_DIR_NAMES, SHELL_STARTUP_FILES, protected_paths
from myrm_tui.agent.sandbox.hidden import Hidden, hidden_paths
from myrm_tui.agent.sandbox.probe import base_flags
from myrm_tui.agent.sandbox.toolchains import tmp_toolchains

# Kept visible inside the fresh /run: DNS configuration for commands allowed on the network.
_RUN_KEEP = ("/run/systemd/resolve",)
# Protected names that are files (a placeholder folder there would break the programs that read
# them, e.g. git reading ~/.gitconfig); every other protected name is a folder.
_FILE_NAMES = frozenset({*SHELL_STARTUP_FILES, ".gitconfig", ".pam_environment", ".xprofile", ".xinitrc", ".xsession"})
# Nested `.git`/`.myrm` folders are looked for this deep below the workspace, in at most this many
# folders: nested repositories sit near the top, and the search runs before every command. Deeper
# ones are still safe from hooks (sandbox/git_env.py), not from config edits.
NESTED_SCAN_DEPTH = 3
NESTED_SCAN_MAX_DIRS = 5000
# Folders never searched for nested repositories (dependencies and caches, often huge).
_SCAN_SKIP = frozenset(
    {"node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".cache", "target", "dist", "build"}
)


@dataclass(frozen=True)
class SandboxPlan:
    """The mounts for one command. `placeholders` are protected paths that do not exist yet: for
    the call they are covered by an empty read-only folder, or an empty file for a file name, so
    they cannot be created. bwrap makes their mount points on the host; `cleanup` removes those
    again (only while still empty: it never removes content). Without network the seccomp filter
    (sandbox/seccomp.py) is loaded from the descriptor passed to `bwrap_argv`."""

    workspace: Path
    writable: bool
    network: bool
    read_only: tuple[Path, ...]
    placeholders: tuple[Path, ...]
    hidden: Hidden = Hidden((), ())
    toolchains: tuple[Path, ...] = ()

    def bwrap_argv(self, bwrap: str, argv: list[str], seccomp_fd: int | None = None) -> list[str]:
        ws = str(self.workspace)
        args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        for keep in _RUN_KEEP:
            args += ["--ro-bind-try", keep, keep]
        for path in self.toolchains:
            args += ["--ro-bind", str(path), str(path)]
        args += ["--bind" if self.writable else "--ro-bind", ws, ws]
        for path in self.read_only:
            args += ["--ro-bind", str(path), str(path)]
        for path in self.placeholders:
            if _is_file_name(path):
                args += ["--ro-bind", str(empty_file()), str(path)]
            else:
                args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        for path in self.hidden.folders:
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        for path in self.hidden.files:
            args += ["--ro-bind", str(empty_file()), str(path)]
        args += base_flags(self.network)
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--chdir", ws, "--", *argv]
        return args

    def cleanup(self) -> None:
        for path in self.placeholders:
            try:
                if _is_file_name(path):
                    if path.is_file() and not path.is_symlink() and path.stat().st_size == 0:
                        path.unlink()
                else:
                    path.rmdir()  # fails (and keeps it) unless empty
            except OSError:
                pass


def _is_file_name(path: Path) -> bool:
    return path.name in _FILE_NAMES


@functools.cache
def empty_file() -> Path:
    """A read-only empty file, private to this process, bound over missing protected files and
    hidden ones (not /dev/null: device nodes cannot be opened in the sandbox, so readers would
    fail)."""
    import atexit
    import tempfile

    fd, name = tempfile.mkstemp(prefix="myrm-sandbox-empty-")
    os.close(fd)
    os.chmod(name, 0o444)
    atexit.register(lambda: Path(name).unlink(missing_ok=True))
    return Path(name)


def _nested_protected(root: Path) -> list[Path]:
    """Existing `.git`/`.myrm` entries below the workspace's top level (nested repositories,
    vendored projects), found by a bounded walk."""
    found: list[Path] = []
    budget = NESTED_SCAN_MAX_DIRS
    level = [root]
    for _ in range(NESTED_SCAN_DEPTH):
        below: list[Path] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                name = entry.name.casefold()
                if name in PROTECTED_DIR_NAMES:
                    if folder != root:
                        found.append(Path(entry.path))
                    continue
                if budget > 0 and name not in _SCAN_SKIP and entry.is_dir(follow_symlinks=False):
                    below.append(Path(entry.path))
                    budget -= 1
        level = below
    return found


def plan_for(
    workspace: Path,
    mode: str,
    network: bool,
    env: dict[str, str] | None = None,
    hide: str = "",
) -> SandboxPlan:
    root = workspace.resolve()
    writable = mode == "workspace-write"
    read_only: list[Path] = []
    placeholders: list[Path] = []
    for item in protected_paths(root, env):
        path = item.path
        if root == path or root.is_relative_to(path):
            writable = False  # the workspace itself is protected (e.g. myrm opened in its config dir)
            continue
        if not writable or not path.is_relative_to(root):
            continue  # already read-only: outside the writable workspace
        if path.exists() or path.is_symlink():
            read_only.append(path)
        else:
            placeholders.append(_first_missing(path, root))
    if writable:
        read_only += _nested_protected(root)
    source = dict(os.environ) if env is None else env
    return SandboxPlan(
        root,
        writable,
        network,
        tuple(dict.fromkeys(read_only)),
        tuple(dict.fromkeys(placeholders)),
        hidden_paths(root, hide, source),
        tmp_toolchains(root, source),
    )


def _first_missing(path: Path, root: Path) -> Path:
    """The outermost missing folder on the way to `path` (covering it covers `path`)."""
    current = path
    while current.parent != root and not current.parent.exists():
        current = current.parent
    return current
