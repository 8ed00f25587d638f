"""One bash call cannot exhaust the machine: a process limit stops fork bombs, a memory limit stops
a runaway allocation, and the model cannot hold a call longer than the user allows.

The fork bombs run with a tight limit (64 tasks) and a short timeout, inside the sandbox's own
PID namespace (everything dies with the call); before running one, the test checks that a limit
mechanism really holds here (a cgroup, or RLIMIT_NPROC for a non-root user), so a broken limit
fails the test instead of loading the machine.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from tests.security.sandbox_calls import bash, turn

TIGHT = {"sandbox_max_processes": 64, "sandbox_max_memory_mb": 256, "bash_timeout": 15.0}
BOMBS = {
    # the function returns at once (its copies run in the background): the sleep keeps the call
    # open while they multiply, or on a loaded box the call could end before they reach the limit
    "shell function": ":(){ :|:& };:; sleep 5",
    "shell loop": "while true; do sleep 30 & done",
    "python": f'{sys.executable} -c "import os, time\nwhile True:\n    os.fork()"',
    "perl": "perl -e 'fork while 1; sleep 30'",
}


def test_a_limit_mechanism_holds_on_this_machine():
    from myrm_tui.agent.sandbox.limits import limits_for, make_cgroup

    cgroup = make_cgroup(limits_for(64, 256), "probe")
    try:
        assert cgroup is not None or os.geteuid() != 0, "root without a writable pids cgroup: no process limit"
    finally:
        if cgroup is not None:
            cgroup.remove()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BOMBS))
async def test_a_fork_bomb_is_stopped_at_the_limit(tmp_path, name):
    test_a_limit_mechanism_holds_on_this_machine()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    started = time.monotonic()
    result = await bash(workspace, f"{BOMBS[name]}; echo survived", **{**TIGHT, "bash_timeout": 8.0})
    assert time.monotonic() - started < 60
    assert "limit of 64 processes and threads" in result.content, result.content[-2000:]


async def test_a_runaway_allocation_is_stopped_and_said(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    grab = f"{sys.executable} -c \"b = bytearray(1024 * 1024 * 1024); print('allocated', len(b))\""
    result = await bash(workspace, grab, **TIGHT)
    assert "allocated" not in result.content, result.content
    assert result.status == "error"


@pytest.mark.slow
async def test_ordinary_work_fits_the_default_limits(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "test_x.py").write_text("def test_ok():\n    assert True\n")
    result = await bash(
        workspace, f"{sys.executable} -m pytest -q -p no:cacheprovider test_x.py && seq 50 | xargs -P 8 -n 1 true"
    )
    assert result.status == "ok" and "1 passed" in result.content, result.content


async def test_the_model_cannot_hold_a_call_past_the_users_cap(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    scripts = tmp_path / "s"
    scripts.mkdir()
    started = time.monotonic()
    log = await turn(workspace, scripts, ["sleep 30"], bash_timeout_max=1.0, bash_timeout=3600.0)
    [finished] = log.finished
    assert finished.status == "timeout" and time.monotonic() - started < 25
    assert "[timed out after 1s" in finished.content


async def test_a_timeout_the_model_asks_for_is_capped_and_said(tmp_path):
    from myrm_tui.agent.tools.base import ToolContext
    from myrm_tui.agent.tools.shell.bash import Bash
    from tests.security.sandbox_calls import settings

    workspace = tmp_path / "ws"
    workspace.mkdir()
    ctx = ToolContext(workspace, settings(bash_timeout_max=2.0), None)
    started = time.monotonic()
    result = await Bash().run({"command": "sleep 30", "timeout": 3600}, ctx)
    assert result.status == "timeout" and time.monotonic() - started < 20
    assert "capped at 2s" in result.content and "[timed out after 2s" in result.content


def test_a_killed_myrms_cgroups_are_swept_by_the_next_call():
    """A myrm killed mid-call never removes its call cgroup; the next myrm's call removes it (an
    empty one of a process that is gone), and leaves a live process's alone."""
    import subprocess

    from myrm_tui.agent.sandbox.limits import limits_for, make_cgroup

    probe = make_cgroup(limits_for(64, 0), "probe")
    if probe is None:
        pytest.skip("no writable pids cgroup here (not root): nothing is created to leak")
    base = probe.folders[0].parent
    probe.remove()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that existed and is gone now
    dead = base / f"myrm-{gone.pid}-0123abcd"
    live = base / f"myrm-{os.getppid()}-0123abcd"
    dead.mkdir()
    live.mkdir()
    try:
        call = make_cgroup(limits_for(64, 0), "next")
        assert call is not None
        call.remove()
        assert not dead.exists() and live.exists()
    finally:
        for folder in (dead, live):
            if folder.exists():
                folder.rmdir()
