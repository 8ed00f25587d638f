"""The bash sandbox: bubblewrap (`bwrap`) on Linux, so a command can only write where it should.

Why bwrap: it is a small setuid-free tool (user namespaces) that distributions ship, it needs no
daemon and no root, and it starts in milliseconds. What a sandboxed command gets:

- the whole file system read-only, a private empty /tmp and /run, a minimal /dev, its own /proc
  (an empty /run and /tmp also hide the daemon sockets there: docker, D-Bus, ssh-agent, X11);
- the workspace writable (`workspace-write`) or read-only too (`read-only`);
- the protected paths inside the workspace (.myrm/, .git/, see protected_paths) read-only; a
  missing one is covered by an empty read-only folder for the call, so it cannot be created;
- no network (its own network namespace: not even the host's loopback) unless the user allowed
  it (the `sandbox_network` setting, or a yes to a call that asked for network);
- its own PID namespace and --die-with-parent: when the call ends, or myrm dies, every process
  it started dies with it, however it was detached (`&`, nohup, setsid, double fork);
- no capabilities, even when myrm runs as root (root in a namespace could otherwise remount /).

Where bwrap is missing or cannot create namespaces, `sandbox_status` says so (once at start, in
`myrm doctor`, in the status bar) and bash runs as before, guarded by approvals only.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.agent.protected_paths import PROTECTED_DIR_NAMES, SHELL_STARTUP_FILES, protected_paths

if TYPE_CHECKING:  # the approvals module imports this one; the type is only named here
    from myrm_tui.agent.approvals import Refusal

MODES = ("workspace-write", "read-only", "off")
# Seconds the one-time `bwrap ... true` probe may take: namespace setup is milliseconds, but a
# loaded 2-core machine can stall a fork for a while; a hung probe must not hang myrm's start.
PROBE_TIMEOUT_S = 10.0
# Kept visible inside the fresh /run: DNS configuration for commands allowed on the network.
_RUN_KEEP = ("/run/systemd/resolve",)
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"


@dataclass(frozen=True)
class BwrapProbe:
    path: str | None
    version: str | None
    works: bool
    problem: str  # one sentence; "" when it works


@dataclass(frozen=True)
class SandboxStatus:
    mode: str  # the configured mode
    active: bool  # commands are really wrapped in bwrap
    probe: BwrapProbe | None
    problem: str  # why a configured sandbox is not active ("" when active or off)

    def badge(self) -> str | None:
        """A few words for the status bar when bash is not in the default sandbox."""
        if self.mode == "off":
            return "sandbox off"
        if not self.active:
            return "no sandbox"
        if self.mode == "read-only":
            return "sandbox read-only"
        return None

    def start_notice(self) -> str | None:
        """The sentence said once at start when a configured sandbox cannot run."""
        if self.mode == "off" or self.active:
            return None
        return (
            f"bash runs without a sandbox: {self.problem} Commands can write anywhere you can and "
            'reach the network; approvals are the only guard. Set `sandbox = "off"` to make '
            "that explicit."
        )


def _base_flags(network: bool) -> list[str]:
    flags = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    if not network:
        flags.append("--unshare-net")
    return flags


@functools.cache
def probe_bwrap() -> BwrapProbe:
    """Find bwrap and really start one sandbox with the flags commands use (cached per process:
    bwrap can be installed yet unusable, e.g. when user namespaces are disabled)."""
    if not sys.platform.startswith("linux"):
        return BwrapProbe(None, None, False, f"the bubblewrap sandbox is Linux-only (this is {sys.platform}).")
    path = shutil.which("bwrap")
    if path is None:
        return BwrapProbe(None, None, False, f"bwrap was not found on PATH; {INSTALL_HINT}.")
    true = shutil.which("true") or "/bin/true"
    try:
        version = (
            subprocess.run(
                [path, "--version"], check=False, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
            ).stdout.strip()
            or None
        )
        trial = subprocess.run(
            [
                path,
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--tmpfs",
                "/tmp",
                *_base_flags(network=False),
                "--",
                true,
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return BwrapProbe(path, None, False, f"{path} did not start a sandbox within {PROBE_TIMEOUT_S:g}s.")
    except OSError as exc:
        return BwrapProbe(path, None, False, f"{path} could not be run: {exc}.")
    if trial.returncode != 0:
        why = (trial.stderr.strip().splitlines() or [f"exit code {trial.returncode}"])[-1]
        return BwrapProbe(
            path,
            version,
            False,
            f"{path} is installed but cannot create a sandbox here ({why}); user namespaces "
            "may be disabled (sysctl kernel.unprivileged_userns_clone / "
            "user.max_user_namespaces).",
        )
    return BwrapProbe(path, version, True, "")


def sandbox_status(mode: str) -> SandboxStatus:
    if mode == "off":
        return SandboxStatus("off", False, None, "")
    if mode not in MODES:
        # An unknown mode fails closed to the strictest sandbox, never to none.
        mode = "read-only"
    probe = probe_bwrap()
    return SandboxStatus(mode, probe.works, probe, probe.problem)


@dataclass(frozen=True)
class SandboxPlan:
    """The mounts for one command. `placeholders` are protected paths that do not exist yet: for
    the call they are covered by an empty read-only folder, or /dev/null for a file name, so they
    cannot be created. bwrap makes their mount points on the host; `cleanup` removes those again
    (only while still empty: it never removes content)."""

    workspace: Path
    writable: bool
    network: bool
    read_only: tuple[Path, ...]
    placeholders: tuple[Path, ...]

    def bwrap_argv(self, bwrap: str, argv: list[str]) -> list[str]:
        ws = str(self.workspace)
        args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        for keep in _RUN_KEEP:
            args += ["--ro-bind-try", keep, keep]
        args += ["--bind" if self.writable else "--ro-bind", ws, ws]
        for path in self.read_only:
            args += ["--ro-bind", str(path), str(path)]
        for path in self.placeholders:
            if _is_file_name(path):
                args += ["--ro-bind", str(_empty_file()), str(path)]
            else:
                args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        args += [*_base_flags(self.network), "--chdir", ws, "--", *argv]
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


# Protected names that are files (a placeholder folder there would break the programs that read
# them, e.g. git reading ~/.gitconfig); every other protected name is a folder.
_FILE_NAMES = frozenset({*SHELL_STARTUP_FILES, ".gitconfig", ".pam_environment", ".xprofile", ".xinitrc", ".xsession"})
# Nested `.git`/`.myrm` folders are looked for this deep below the workspace, in at most this many
# folders: nested repositories sit near the top, and the search runs before every command.
NESTED_SCAN_DEPTH = 3
NESTED_SCAN_MAX_DIRS = 5000
# Folders never searched for nested repositories (dependencies and caches, often huge).
_SCAN_SKIP = frozenset(
    {"node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".cache", "target", "dist", "build"}
)


def _is_file_name(path: Path) -> bool:
    return path.name in _FILE_NAMES


@functools.cache
def _empty_file() -> Path:
    """A read-only empty file, private to this process, bound over missing protected files (not
    /dev/null: device nodes cannot be opened in the sandbox, so readers would fail)."""
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


def plan_for(workspace: Path, mode: str, network: bool, env: Mapping[str, str] | None = None) -> SandboxPlan:
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
    return SandboxPlan(root, writable, network, tuple(dict.fromkeys(read_only)), tuple(dict.fromkeys(placeholders)))


def _first_missing(path: Path, root: Path) -> Path:
    """The outermost missing folder on the way to `path` (covering it covers `path`)."""
    current = path
    while current.parent != root and not current.parent.exists():
        current = current.parent
    return current


def headless_network_refusal(summary: str) -> Refusal:
    """What a headless run says when a command asks for the network: no flag of `myrm run`
    grants it (yolo does not), only a person's yes or the `sandbox_network` setting."""
    from myrm_tui.agent.approvals import Refusal

    return Refusal(
        for_model=(
            f"not run: {summary} asks for network access, which needs a person's yes, and this "
            "headless run has nobody to ask. Do not retry it; tell the user what you needed the "
            "network for."
        ),
        for_user=(
            f"not run: {summary} — the command asks for network access, which the sandbox only "
            "allows after a person's yes; set sandbox_network = true (MYRM_SANDBOX_NETWORK=1) to "
            "allow the network for every command."
        ),
    )
