"""bash with real subprocesses: exit codes, streaming, timeouts, process-group kills, spills."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from agent_helpers import pid_gone, settings_for

from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.bash import Bash


async def wait_for_file(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def gone_soon(pid: int, within: float = 1.0) -> bool:
    """Signals land asynchronously; allow the kernel a moment after the tool returned."""
    deadline = time.monotonic() + within
    while not pid_gone(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return pid_gone(pid)


async def test_output_exit_code_and_cwd(ctx, workspace):
    chunks: list[str] = []
    ctx.emit = chunks.append
    result = await Bash().run({"command": "pwd; echo err >&2; exit 3"}, ctx)
    assert result.content.splitlines() == [str(workspace), "err", "[exit code 3]"]
    assert result.status == "error"
    assert "".join(chunks) == f"{workspace}\nerr\n"


async def test_no_output(ctx):
    result = await Bash().run({"command": "true"}, ctx)
    assert result.content == "(no output)\n[exit code 0]" and result.status == "ok"


async def test_timeout_kills_the_whole_group(ctx, workspace):
    pidfile = workspace / "child.pid"
    started = time.monotonic()
    result = await Bash().run(
        {"command": f"sleep 30 & echo $! > {pidfile}; echo started; wait", "timeout": 1}, ctx)
    assert time.monotonic() - started < 5
    assert result.status == "timeout"
    assert result.content.splitlines() == ["started", "[timed out after 1s: process group killed]"]
    assert await gone_soon(int(pidfile.read_text()))
    assert ctx.process_groups == set()


async def test_cancellation_kills_the_group(ctx, workspace):
    pidfile = workspace / "child.pid"
    task = asyncio.create_task(Bash().run({"command": f"sleep 30 & echo $! > {pidfile}; wait"}, ctx))
    child = int(await wait_for_file(pidfile))
    assert not pid_gone(child) and len(ctx.process_groups) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone_soon(child) and ctx.process_groups == set()


async def test_sigterm_ignoring_child_gets_sigkill(ctx, workspace):
    pidfile = workspace / "stubborn.pid"
    command = (f"python3 -c \"import os,signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
               f"open('{pidfile}','w').write(str(os.getpid())); time.sleep(60)\"")
    result = await Bash().run({"command": command, "timeout": 1.5}, ctx)
    assert result.status == "timeout"
    assert await gone_soon(int(pidfile.read_text()))


async def test_huge_output_spills_to_vault(workspace, store):
    ctx = ToolContext(workspace, settings_for(tool_output_cap=10_000), store.vault)
    command = "python3 -c \"import sys; [print(f'line {i:07d} ' + 'x'*80) for i in range(22000)]\""
    result = await Bash().run({"command": command}, ctx)
    assert result.vault_handle and result.vault_handle.startswith("vault://")
    assert len(result.content) < 10_500
    assert result.content.startswith("[output 2,068,000 chars, 22,000 lines")  # the handle leads
    assert "line 0000000 " in result.content and "line 0021999 " in result.content  # head and tail kept
    assert f"full: {result.vault_handle}" in result.content
    assert f'file_read("{result.vault_handle}", start_line=' in result.content
    assert result.content.endswith("[exit code 0]")
    full = store.vault.read_text(result.vault_handle)
    assert len(full) > 2_000_000 and full.count("\n") == 22000


async def test_binary_output_is_noted_not_garbage(ctx):
    result = await Bash().run({"command": "printf 'ok\\000\\377\\376end\\n'"}, ctx)
    first = result.content.splitlines()[0]
    assert first.startswith("ok") and first.endswith("end") and "\x00" not in result.content
    assert "binary data" in result.content


async def test_background_process_holding_pipe_does_not_hang(ctx, workspace):
    pidfile = workspace / "bg.pid"
    started = time.monotonic()
    result = await Bash().run({"command": f"sleep 20 & echo $! > {pidfile}; echo done", "timeout": 10}, ctx)
    assert time.monotonic() - started < 5
    assert result.content.splitlines()[0] == "done" and "[exit code 0]" in result.content
    import os

    from myrm_tui.agent.tools.processes import kill_group_now
    kill_group_now(os.getpgid(int(pidfile.read_text())))
