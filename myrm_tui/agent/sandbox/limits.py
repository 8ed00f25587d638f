"""How many processes and how much memory one sandboxed bash call may use.

Why two mechanisms: neither works for everyone.

- RLIMIT_NPROC and RLIMIT_DATA, set inside the sandbox (a `ulimit` in front of the command, after
  bwrap made the user namespace): for a normal user the kernel counts the processes and threads of
  that user *in that namespace*, so the limit is per call and ignores the user's other programs.
  Root is exempt from RLIMIT_NPROC even inside a user namespace (the kernel checks the global uid),
  and RLIMIT_DATA bounds each process, not their sum.
- A cgroup per call (pids.max, and memory.limit_in_bytes or memory.max), when this process may
  create one: root with cgroup v1 controllers, or a cgroup v2 tree whose controllers are delegated
  to us. That bounds the whole call, root included. A normal user on a systemd desktop usually
  cannot (their own cgroup has processes, so no controller can be enabled below it).

So as a normal user the process limit always holds and memory is bounded per process; as root
both hold when the cgroup controllers are writable (the usual case for root), and `limits_note`
says when they are not.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

# The cgroup folders this process creates are named after it, so a leftover (a call whose last
# process took a moment to exit, or a myrm that was killed) is swept at a later call, by this
# process or the next myrm, and never mistaken for a running one's.
_PREFIX = f"myrm-{os.getpid()}-"
_CGROUP_ROOT = Path("/sys/fs/cgroup")
# A child cgroup can only be removed once its last process has been reaped: after the call's
# processes are killed this usually takes milliseconds.
_RMDIR_TRIES = 5
_RMDIR_PAUSE_S = 0.01
_MIB = 1024 * 1024


@dataclass(frozen=True)
class CallLimits:
    max_processes: int  # tasks (processes and threads) at once; 0: no limit
    max_memory_bytes: int  # 0: no limit


def limits_for(max_processes: int, max_memory_mb: int) -> CallLimits:
    """`max_memory_mb` 0 means half of this machine's memory (enough for a big build, and the
    desktop and myrm keep the other half)."""
    memory = max_memory_mb * _MIB if max_memory_mb > 0 else _physical_memory() // 2
    return CallLimits(max(0, max_processes), max(0, memory))


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def inner_argv(limits: CallLimits, shell: str, command: str) -> list[str]:
    """The command as the sandbox runs it: a shell that lowers its own limits (soft and hard, so
    nothing inside can raise them again) and then becomes the command's shell."""
    steps = []
    if limits.max_processes:
        steps.append(f"ulimit -HSu {limits.max_processes}")
    if limits.max_memory_bytes:
        steps.append(f"ulimit -HSd {limits.max_memory_bytes // 1024}")
    if not steps:
        return [shell, "-c", command]
    script = " && ".join(steps) + ' || exit 125; exec "$0" -c "$1"'
    return [shell, "-c", script, shell, command]


@dataclass
class CallCgroup:
    """The cgroup folders of one call (one per controller hierarchy) and the files that move a
    process into them."""

    folders: list[Path] = field(default_factory=list)
    procs: list[Path] = field(default_factory=list)

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` started by a tiny shell that first moves itself into the call's cgroups (so
        bwrap and everything below start inside them), then execs it."""
        script = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *map(str, self.procs), "--", *argv]

    def hit(self) -> tuple[int, bool]:
        """(forks refused at the process limit, whether the memory limit was reached)."""
        forks, memory = 0, False
        for folder in self.folders:
            events = _read(folder / "pids.events")
            match = re.search(r"^max (\d+)", events, re.M)
            if match:
                forks += int(match.group(1))
            oom = _read(folder / "memory.events") + _read(folder / "memory.oom_control")
            if re.search(r"^oom_kill [1-9]", oom, re.M) or _read(folder / "memory.failcnt").strip() not in ("", "0"):
                memory = True
        return forks, memory

    def remove(self) -> None:
        for folder in self.folders:
            for attempt in range(_RMDIR_TRIES):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if attempt + 1 < _RMDIR_TRIES:
                        time.sleep(_RMDIR_PAUSE_S)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@dataclass(frozen=True)
class _Controller:
    name: str  # pids or memory
    limit_file: str  # v1 file name (v2: pids.max / memory.max)
    v2_file: str


_PIDS = _Controller("pids", "pids.max", "pids.max")
_MEMORY = _Controller("memory", "memory.limit_in_bytes", "memory.max")


def _own_cgroups() -> dict[str, str]:
    """controller (or "" for cgroup v2) -> this process's cgroup path, from /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for name in parts[1].split(","):
            found[name] = parts[2]
    return found


def _base_for(controller: _Controller, own: dict[str, str]) -> tuple[Path, str] | None:
    """Where a child cgroup for this controller can go, and the file that sets its limit."""
    if controller.name in own:
        base = _CGROUP_ROOT / controller.name / own[controller.name].lstrip("/")
        if base.is_dir():
            return base, controller.limit_file
    if "" in own:
        for mount in (_CGROUP_ROOT, _CGROUP_ROOT / "unified"):
            base = mount / own[""].lstrip("/")
            if controller.name in _read(base / "cgroup.subtree_control").split():
                return base, controller.v2_file
    return None


def make_cgroup(limits: CallLimits, serial: str) -> CallCgroup | None:
    """A fresh cgroup per hierarchy with the call's limits, or None when none can be made (not
    root, no delegated controllers): the rlimits are then the only bound."""
    wanted = [(c, v) for c, v in ((_PIDS, limits.max_processes), (_MEMORY, limits.max_memory_bytes)) if v]
    if not wanted:
        return None
    own = _own_cgroups()
    cgroup = CallCgroup()
    for controller, value in wanted:
        placed = _base_for(controller, own)
        if placed is None:
            continue
        base, limit_file = placed
        folder = base / f"{_PREFIX}{serial}"
        existing = next((i for i, f in enumerate(cgroup.folders) if f == folder), None)
        try:
            _sweep(base)
            if existing is None:
                folder.mkdir()
            (folder / limit_file).write_text(str(value))
        except OSError:
            if existing is None:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            continue
        if existing is None:
            cgroup.folders.append(folder)
            cgroup.procs.append(folder / "cgroup.procs")
    return cgroup if cgroup.folders else None


def _sweep(base: Path) -> None:
    """Remove leftover call cgroups: this process's, and those of myrm processes that are gone (one
    killed mid-call never removed its own). Empty ones only: rmdir refuses the others."""
    with contextlib.suppress(OSError):
        for old in base.glob("myrm-*-*"):
            owner = old.name.split("-")[1]
            if not old.name.startswith(_PREFIX) and (not owner.isdigit() or _alive(int(owner))):
                continue
            with contextlib.suppress(OSError):
                old.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def limits_note(limits: CallLimits, cgroup: CallCgroup | None) -> str | None:
    """Why a limit does not hold for this call ("" when both do), for doctor and the docs."""
    if limits.max_processes and os.geteuid() == 0 and (cgroup is None or not cgroup.folders):
        return "the process limit does not hold: myrm runs as root and no writable pids cgroup was found"
    return None
