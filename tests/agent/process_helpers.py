"""Finding a test's processes from the host side, by a unique token in their command line.

Why not `$!` or a pid file: inside the bwrap sandbox a command sees its own PID namespace, so the
pid it reports means another process (or none) on the host. A unique token (`sleep 987.1234`)
names the process wherever it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from pathlib import Path


def token_seconds() -> str:
    """A sleep duration no other process on the machine uses: 900-999 s plus random decimals."""
    return f"{900 + secrets.randbelow(99)}.{secrets.randbelow(10**8):08d}"


def pids_with(token: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains `token`, excluding this one."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token in cmdline and state not in ("Z", "X"):
            found.append(int(name))
    return found


async def wait_until_running(token: str, timeout: float = 20.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = pids_with(token)
        if pids:
            return pids
        await asyncio.sleep(0.02)
    raise AssertionError(f"no process with {token!r} ever started")


async def all_gone(token: str, within: float = 2.0) -> bool:
    """Signals land asynchronously; allow the kernel a moment after the tool returned."""
    deadline = time.monotonic() + within
    while pids_with(token) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not pids_with(token)


def kill_all(token: str) -> None:
    """Test cleanup, so a failing test leaves nothing behind."""
    import signal

    for pid in pids_with(token):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
