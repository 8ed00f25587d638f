"""Background commands through the live agent and the scripted model: `bash` with background: true
returns a handle at once, bash_output reads only what is new, bash_kill and closing the agent
stop it, big output reaches the vault and ctx_search, and approval and the sandbox apply as for
any bash command."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from myrm_tui.agent.events import ToolFinished
from myrm_tui.agent.sandbox import probe_bwrap
from myrm_tui.agent.tools.shell import background as bash_background
from myrm_tui.agent.tools.shell.background import BackgroundEnded, BackgroundStarted
from tests.agent.agent_helpers import drive, make_agent
from tests.agent.process_helpers import all_gone, kill_all, token_seconds, wait_until_running

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 180
HAS_BWRAP = shutil.which("bwrap") is not None and probe_bwrap().works
MODES = [
    pytest.param("workspace-write", marks=pytest.mark.skipif(not HAS_BWRAP, reason="needs a working bwrap")),
    "off",
]
NEEDLE = "serve step 4000.5 ok OSPREY-4471"
# ~120k characters of log lines with the needle alone in the middle; the command builds the needle
# from pieces, so only the output (not the stored call) contains it. The needle keeps the log's
# shape (a line that breaks it is kept in the excerpt: `context/filters/notable.py`), so only
# the vault has it.
BIG_LOG = (
    "seq -f 'serve step %g ok' 1 4000; printf 'serve step 4000.5 ok OSPREY-%s\\n' 4471; "
    "seq -f 'serve step %g ok' 4001 8000"
)


@pytest.fixture
def token():
    value = token_seconds()
    yield value
    kill_all(value)


def call(call_id: str, name: str, **arguments) -> dict:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def results(log) -> dict[str, ToolFinished]:
    return {f.call_id: f for f in log.of(ToolFinished)}


def lines_of(content: str, prefix: str) -> list[str]:
    return [line for line in content.splitlines() if line.startswith(prefix)]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_growing_output_is_read_in_new_parts_and_bash_kill_stops_it(store, workspace, script, token, mode):
    ticker = f"for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done # {token}"
    model = script(
        call("b1", "bash", command=ticker, background=True),
        {"text": "started"},
        call("o1", "bash_output", handle="bg-1"),
        {"text": "read"},
        call("o2", "bash_output", handle="bg-1"),
        {"text": "read again"},
        call("k1", "bash_kill", handle="bg-1"),
        {"text": "stopped"},
    )
    agent = make_agent(store, workspace, model, approval="yolo", sandbox=mode)
    heard: list[object] = []
    agent.background.subscribe(heard.append)
    try:
        started = results(await drive(agent, "start the ticker"))["b1"]
        assert started.status == "ok" and "bg-1" in started.content and "bash_output" in started.content
        await wait_until_running(token)
        await asyncio.sleep(0.6)
        first = results(await drive(agent, "what did it say?"))["o1"]
        await asyncio.sleep(0.6)
        second = results(await drive(agent, "and now?"))["o2"]
        one, two = lines_of(first.content, "tick-"), lines_of(second.content, "tick-")
        assert one and two and not set(one) & set(two)  # each read gives only new lines
        assert int(two[0].split("-")[1]) == int(one[-1].split("-")[1]) + 1  # and nothing is skipped
        assert "[bg-1 is still running;" in first.content and "[bg-1 is still running;" in second.content
        [info] = agent.background.listing()
        assert info.handle == "bg-1" and info.running and info.exit_code is None and info.bytes > 0

        killed = results(await drive(agent, "stop it"))["k1"]
        assert killed.status == "ok" and "stopped (bash_kill)" in killed.content
        assert await all_gone(token)
        [info] = agent.background.listing()
        assert not info.running and info.stopped == "bash_kill"
        assert [type(e) for e in heard] == [BackgroundStarted, BackgroundEnded]
    finally:
        await agent.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_closing_the_agent_kills_a_still_running_command(store, workspace, script, token, mode):
    model = script(call("b1", "bash", command=f"sleep {token}", background=True), {"text": "started"})
    agent = make_agent(store, workspace, model, approval="yolo", sandbox=mode)
    await drive(agent, "start it")
    pids = await wait_until_running(token)
    stopped = await agent.aclose()
    assert [info.handle for info in stopped] == ["bg-1"]
    assert await all_gone(token)
    assert all(not Path(f"/proc/{pid}").exists() or _zombie(pid) for pid in pids)


async def test_app_shutdown_kills_background_commands_at_once(store, workspace, script, token):
    model = script(call("b1", "bash", command=f"sleep {token}", background=True), {"text": "started"})
    agent = make_agent(store, workspace, model, approval="yolo", sandbox="off")
    await drive(agent, "start it")
    await wait_until_running(token)
    agent.kill_running_processes()  # the TUI's synchronous shutdown path
    assert await all_gone(token)
    await agent.aclose()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


async def test_output_over_the_cap_reaches_the_vault_and_ctx_search(store, workspace, script):
    model = script(
        call("b1", "bash", command=BIG_LOG, background=True),
        {"text": "started"},
        call("o1", "bash_output", handle="bg-1", wait=20),
        {"text": "read"},
        call("s1", "ctx_search", query="OSPREY-4471"),
        {"text": "found"},
    )
    agent = make_agent(store, workspace, model, approval="yolo", tool_output_cap=2_000)
    try:
        log = await drive(agent, "serve it")
        log.events += (await drive(agent, "read it")).events
        log.events += (await drive(agent, "find the odd line")).events
    finally:
        await agent.aclose()
    found = results(log)
    read = found["o1"]
    assert read.vault_handle and NEEDLE not in read.content and "exited with code 0" in read.content
    assert "OSPREY-4471" in found["s1"].content and read.vault_handle in found["s1"].content
    assert read.vault_handle in [hit.handle for hit in store.search(agent.session_id, "OSPREY-4471")]


async def test_output_above_the_memory_cap_goes_to_the_vault_even_if_never_read(store, workspace, script, monkeypatch):
    monkeypatch.setattr(bash_background, "MEMORY_CHARS", 4_096)
    model = script(call("b1", "bash", command=BIG_LOG, background=True), {"text": "started"})
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "serve it")
    await asyncio.wait_for(_ended(agent), 20)
    hits = store.search(agent.session_id, "OSPREY-4471")
    assert hits and all(hit.handle.startswith("vault://") for hit in hits)  # indexed without any read
    await agent.aclose()


async def test_unread_output_is_kept_in_the_vault_when_the_session_closes(store, workspace, script):
    model = script(call("b1", "bash", command="echo KESTREL-2208 ready; sleep 30", background=True), {"text": "ok"})
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "serve it")
    for _ in range(200):
        if agent.background.listing()[0].bytes:
            break
        await asyncio.sleep(0.02)
    await agent.aclose()
    assert store.search(agent.session_id, "KESTREL-2208")


async def _ended(agent) -> None:
    while any(info.running for info in agent.background.listing()):
        await asyncio.sleep(0.05)


async def test_a_background_command_is_asked_like_any_bash_command(store, workspace, script, token):
    model = script(
        call("b1", "bash", command=f"sleep {token}", background=True),
        {"text": "not allowed"},
        call("b2", "bash", command=f"rm -rf build; sleep {token}", background=True),
        {"text": "refused"},
    )
    agent = make_agent(store, workspace, model, approval="ask")
    log = await drive(agent, "start it", approve=False)
    [request] = log.approvals
    assert request.summary.endswith("[background]") and f"sleep {token}" in request.summary
    assert results(log)["b1"].status == "denied" and agent.background.listing() == []
    # yolo still asks for a destructive command, started in the background or not
    agent = make_agent(store, workspace, model, approval="yolo")  # a new session: the script starts at b1
    log = await drive(agent, "start it", approve=False)
    assert results(log)["b1"].status == "ok"
    await wait_until_running(token)
    log = await drive(agent, "clean and start", approve=False)
    [request] = log.approvals
    assert request.destructive and request.summary.endswith("[background]")
    assert results(log)["b2"].status == "denied" and len(agent.background.listing()) == 1
    await agent.aclose()
    assert await all_gone(token)


async def test_the_number_of_running_commands_is_capped(store, workspace, script, token, monkeypatch):
    monkeypatch.setattr(bash_background, "MAX_RUNNING", 1)
    model = script(
        call("b1", "bash", command=f"sleep {token}", background=True),
        call("b2", "bash", command=f"sleep {token}", background=True),
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    try:
        found = results(await drive(agent, "start two"))
        assert found["b1"].status == "ok"
        assert found["b2"].status == "error" and "bash_kill" in found["b2"].content
    finally:
        await agent.aclose()


@pytest.mark.skipif(not HAS_BWRAP, reason="needs a working bwrap")
async def test_it_runs_inside_the_sandbox(store, workspace, script):
    # Not under /tmp: the sandbox has a private /tmp, where a write "works" without reaching the host.
    folder = Path(tempfile.mkdtemp(prefix="myrm-bg-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    outside = folder / "outside.txt"
    model = script(
        call("b1", "bash", command=f"echo inside > in.txt; echo escaped > {outside}; echo done", background=True),
        {"text": "started"},
        call("o1", "bash_output", handle="bg-1", wait=20),
        {"text": "read"},
    )
    agent = make_agent(store, workspace, model, approval="yolo", sandbox="workspace-write")
    try:
        await drive(agent, "try it")
        read = results(await drive(agent, "what happened?"))["o1"]
    finally:
        await agent.aclose()
        escaped = outside.exists()
        shutil.rmtree(folder, ignore_errors=True)
    assert "Read-only file system" in read.content and "[sandbox (workspace-write)" in read.content
    assert (workspace / "in.txt").read_text() == "inside\n" and not escaped


async def test_unknown_handles_and_tools_without_a_session_say_so(store, workspace, script):
    model = script(call("o1", "bash_output", handle="bg-7"), {"text": "hm"})
    agent = make_agent(store, workspace, model, approval="yolo")
    found = results(await drive(agent, "read"))
    assert found["o1"].status == "error" and "no background command 'bg-7'" in found["o1"].content
    await agent.aclose()


@pytest.mark.slow
def test_myrm_run_stops_background_commands_at_the_end_and_says_so(tmp_path: Path, token: str) -> None:
    workspace, config = tmp_path / "ws", tmp_path / "config"
    (workspace / ".git").mkdir(parents=True)
    config.mkdir()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"turns": [call("b1", "bash", command=f"sleep {token}", background=True), {"text": "started"}]})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env["MYRM_CONFIG_DIR"] = str(config)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-m", "myrm_tui", "run", "--approve", "yolo", "--model", f"scripted/{script}", "serve"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"stopped 1 background command(s) still running at the end: bg-1 (sleep {token})" in done.stderr
    assert asyncio.run(all_gone(token))


# A process that exits with its event loop still open: nothing closed the session and no task was
# cancelled, so only the interpreter-exit net (BackgroundJobs registers it while a command runs)
# stops the command. The token comes by environment: on the command line it would name this process.
EXIT_WITHOUT_CLOSING = """
import asyncio, os, sys
from pathlib import Path
from myrm_tui.store import Store
from tests.agent.agent_helpers import drive, make_agent
from tests.agent.process_helpers import wait_until_running

workspace, model, token = Path(sys.argv[1]), sys.argv[2], os.environ["BG_TOKEN"]
agent = make_agent(Store.open(workspace), workspace, model, approval="yolo", sandbox="off")
loop = asyncio.new_event_loop()
loop.run_until_complete(drive(agent, "start it"))
loop.run_until_complete(wait_until_running(token))
print("running", flush=True)
sys.exit(0)
"""


@pytest.mark.slow
def test_a_myrm_that_exits_without_closing_leaves_no_background_command(tmp_path: Path, token: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"turns": [call("b1", "bash", command=f"sleep {token}", background=True), {"text": "started"}]})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env.update(
        MYRM_CONFIG_DIR=str(tmp_path / "config"),
        BG_TOKEN=token,
        ENABLE_MYRM_TEST_PROVIDERS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")])),
    )
    done = subprocess.run(
        [sys.executable, "-c", EXIT_WITHOUT_CLOSING, str(workspace), f"scripted/{script}"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0 and "running" in done.stdout, done.stderr
    assert asyncio.run(all_gone(token))


async def test_a_closed_session_is_not_held_by_the_exit_net(store, workspace, script, token):
    """The net is the session's own and lets go once no command runs: a closed session can be freed."""
    import gc
    import weakref

    model = script(call("b1", "bash", command=f"sleep {token}", background=True), {"text": "started"})
    agent = make_agent(store, workspace, model, approval="yolo", sandbox="off")
    await drive(agent, "start it")
    await wait_until_running(token)
    jobs = weakref.ref(agent.background)
    await agent.aclose()
    del agent
    gc.collect()
    assert jobs() is None
