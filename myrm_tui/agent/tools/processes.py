"""Killing a whole process group: the shell, its children and their children.

Why a process group: `bash -c "make test"` forks compilers and test workers; killing only the
shell leaves them running and holding the output pipe. Each command starts its own session
(start_new_session=True), so its pid is also its group id.
"""

from __future__ import annotations

import asyncio
import os
import signal

from myrm_tui.agent.limits import KILL_GRACE_S

# How often the group is polled while waiting for it to exit after SIGTERM.
_POLL_S = 0.05


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def kill_group(pgid: int, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM, wait up to `grace_s` for the group to exit, then SIGKILL whatever is left.
    SIGKILL is sent even if this coroutine is cancelled while waiting."""
    signal_group(pgid, signal.SIGTERM)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while group_alive(pgid) and loop.time() < deadline:
            await asyncio.sleep(_POLL_S)
    finally:
        signal_group(pgid, signal.SIGKILL)


def kill_group_now(pgid: int) -> None:
    """Synchronous last resort (generator finalisation, shutdown): no grace, SIGKILL."""
    signal_group(pgid, signal.SIGTERM)
    signal_group(pgid, signal.SIGKILL)
