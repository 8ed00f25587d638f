"""Ending everything a bash call started: its process group, its descendants, and processes
that detached but still carry the call's marker in their environment.

Why all three: `bash -c "make test"` forks compilers and test workers (the group); `setsid cmd &`
leaves the group but stays a descendant while its parent lives; a double fork (`(setsid cmd &)`)
is reparented to init and found only by the marker variable every child inherits. Inside the
bwrap sandbox none of this is needed for correctness (its PID namespace dies with the call), but
the descendants still get SIGTERM first so test runners can flush. What cannot be caught without
the sandbox: a process that starts with a cleared environment (`env -i setsid cmd`) and detaches.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from myrm_tui.agent.limits import KILL_GRACE_S

# How often the processes are polled while waiting for them to exit after SIGTERM.
_POLL_S = 0.05
# Extra scans for processes forked just after the first one, this far apart (a fork takes about
# a millisecond; 20 ms covers a loaded machine without slowing every call much); they stop at the
# first scan that finds nothing new.
_LATE_FORK_ROUNDS = 4
_LATE_FORK_S = 0.02
# The variable every bash child inherits; its value is unique per call.
CALL_MARKER_VAR = "MYRM_BASH_CALL"
_PROC = Path("/proc")


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) from /proc, or None when the process is gone."""
    try:
        fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def running(pid: int) -> bool:
    """True while the process runs (a zombie waiting for its reaper counts as gone)."""
    stat = _stat(pid)
    if stat is None:
        return not _PROC.is_dir() and _exists(pid)  # no /proc (not Linux): ask the kernel
    return stat[0] not in ("Z", "X")


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def descendants(root: int) -> list[int]:
    """Every live process below `root` in the process tree (empty without /proc)."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        stat = _stat(pid)
        if stat is not None:
            children.setdefault(stat[1], []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def marked(marker: str) -> list[int]:
    """Processes whose environment carries this call's marker (readable ones: our own user's)."""
    needle = f"{CALL_MARKER_VAR}={marker}".encode()
    me = os.getpid()
    found = []
    for pid in _all_pids():
        if pid == me:
            continue
        try:
            environ = (_PROC / str(pid) / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return found


def _targets(pgid: int, marker: str | None, tree: bool) -> set[int]:
    pids = set(descendants(pgid)) if tree else set()
    if marker:
        pids.update(marked(marker))
    return {pid for pid in pids if running(pid)}


async def end_call(pgid: int, marker: str | None, *, tree: bool, grace_s: float = KILL_GRACE_S) -> int:
    """SIGTERM the call's group, marked processes and (`tree`: only while the leader has not been
    reaped, so its pid cannot have been reused) its descendants; SIGKILL what is left after
    `grace_s`. Returns how many processes outside the group were found. SIGKILL is sent even if
    this coroutine is cancelled while waiting."""
    targets = _targets(pgid, marker, tree)
    if not targets and not group_alive(pgid):
        return await _late_forks(pgid, marker, tree, set())
    signal_group(pgid, signal.SIGTERM)
    for pid in targets:
        _signal(pid, signal.SIGTERM)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while loop.time() < deadline and (group_alive(pgid) or any(running(p) for p in targets)):
            await asyncio.sleep(_POLL_S)
    finally:
        signal_group(pgid, signal.SIGKILL)
        for pid in targets | _targets(pgid, marker, tree):
            _signal(pid, signal.SIGKILL)
    return len(targets) + await _late_forks(pgid, marker, tree, targets)


async def _late_forks(pgid: int, marker: str | None, tree: bool, seen: set[int]) -> int:
    """A daemon caught mid-fork (`fork(); setsid(); fork()`) can spawn its grandchild just after a
    scan; look again a few times and SIGKILL what appears (whenever a marker is given: always
    without the sandbox, and inside it when the call is stopped early)."""
    if not marker:
        return 0
    found = 0
    for _ in range(_LATE_FORK_ROUNDS):
        await asyncio.sleep(_LATE_FORK_S)
        fresh = _targets(pgid, marker, tree) - seen
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGKILL)
        seen = seen | fresh
        found += len(fresh)
    return found


def kill_group_now(pgid: int) -> None:
    """Synchronous last resort (generator finalisation, shutdown): no grace, SIGKILL."""
    signal_group(pgid, signal.SIGTERM)
    signal_group(pgid, signal.SIGKILL)


def kill_call_now(pgid: int, marker: str | None) -> None:
    """Synchronous stop of a call that has not been reaped yet (app or interpreter exit): SIGKILL
    its group, its descendants and, without the sandbox, the processes carrying its marker."""
    targets = _targets(pgid, marker, tree=True)
    signal_group(pgid, signal.SIGKILL)
    for pid in targets:
        _signal(pid, signal.SIGKILL)
