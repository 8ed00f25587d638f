"""Finding bwrap and proving, once per process, that it really starts a filtered sandbox here.

Why a real trial run: bwrap can be installed yet unusable (user namespaces disabled, a kernel
without seccomp filters), and a sandbox that only looks configured is worse than none.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from myrm_tui.agent.sandbox import seccomp

# Seconds the one-time `bwrap ... true` probe may take: namespace setup is milliseconds, but a
# loaded 2-core machine can stall a fork for a while; a hung probe must not hang myrm's start.
PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"


@dataclass(frozen=True)
class BwrapProbe:
    path: str | None
    version: str | None
    works: bool
    problem: str  # one sentence; "" when it works


def base_flags(network: bool) -> list[str]:
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
    """Find bwrap and really start one sandbox with the flags and the seccomp filter commands use
    (cached per process)."""
    if not sys.platform.startswith("linux"):
        return BwrapProbe(None, None, False, f"the bubblewrap sandbox is Linux-only (this is {sys.platform}).")
    path = shutil.which("bwrap")
    if path is None:
        return BwrapProbe(None, None, False, f"bwrap was not found on PATH; {INSTALL_HINT}.")
    program = seccomp.filter_for(seccomp.machine())
    if program is None:
        return BwrapProbe(path, None, False, seccomp.unsupported_problem(seccomp.machine()))
    true = shutil.which("true") or "/bin/true"
    fd = seccomp.filter_fd(program)
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
                *base_flags(network=False),
                "--seccomp",
                str(fd),
                "--",
                true,
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            pass_fds=(fd,),
        )
    except subprocess.TimeoutExpired:
        return BwrapProbe(path, None, False, f"{path} did not start a sandbox within {PROBE_TIMEOUT_S:g}s.")
    except OSError as exc:
        return BwrapProbe(path, None, False, f"{path} could not be run: {exc}.")
    finally:
        os.close(fd)
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
