"""The bwrap sandbox of the bash tool, attacked for real (needs bubblewrap: .ci/run installs it).

Every attack of bench/sandbox_attacks.py (writes outside the workspace, protected paths, network
to real host listeners, secrets in the environment and in /proc, children that try to outlive
the call) must be blocked, judged by evidence on the host. The same harness with the sandbox
off must see the attacks work (so a blind harness cannot pass), and everyday work must still
work inside: pytest, git, a venv with a local package installed by pip.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bench.sandbox_attacks import ATTACKS, Listeners, run_attack
from myrm_tui.agent.events import Notice, ToolFinished
from myrm_tui.agent.sandbox import plan_for, probe_bwrap, sandbox_status
from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.shell.bash import Bash
from tests.agent.agent_helpers import drive, make_agent, settings_for
from tests.agent.process_helpers import all_gone, kill_all, pids_with


@pytest.fixture(scope="module")
def listeners():
    served = Listeners()
    served.start()
    yield served
    served.stop()


def ctx_for(workspace: Path, **values) -> ToolContext:
    return ToolContext(workspace, settings_for(**values), None)


async def run(workspace: Path, command: str, **values):
    return await Bash().run({"command": command}, ctx_for(workspace, **values))


def connect_command(port: int) -> str:
    return (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('connected')\""
    )


def test_bwrap_is_installed_and_really_starts_a_sandbox_here():
    probe = probe_bwrap()
    assert probe.works, probe.problem
    assert probe.path and probe.version and probe.version.startswith("bubblewrap")
    assert probe_bwrap() is probe  # run once per process, then cached
    status = sandbox_status("workspace-write")
    assert status.active and status.badge() is None and status.start_notice() is None


@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{a.group}:{a.name}" for a in ATTACKS])
async def test_every_attack_is_blocked_by_the_sandbox(attack, listeners):
    outcome = await run_attack(attack, "workspace-write", listeners)
    assert outcome.blocked, f"{attack.command!r}: {outcome.evidence}\n{outcome.output}"


CONTROLS = ("redirect", "new git hook", "tcp loopback", "myrm's /proc environ", "clean environment")


@pytest.mark.parametrize("name", CONTROLS)
async def test_without_the_sandbox_the_harness_sees_the_attack_work(name, listeners):
    # One attack per group: the evidence the suite relies on is real, and these are exactly
    # the holes `sandbox = "off"` leaves open.
    attack = next(a for a in ATTACKS if a.name == name)
    outcome = await run_attack(attack, "off", listeners)
    assert not outcome.blocked and outcome.evidence


async def test_network_needs_a_yes_or_the_setting(workspace, listeners):
    before = listeners.hits
    denied = await run(workspace, connect_command(listeners.port))
    assert denied.status == "error" and "connected" not in denied.content
    assert "[sandbox: no network, not even the host's localhost; call bash again with network: true" in denied.content
    assert listeners.hits == before
    granted = ctx_for(workspace)
    granted.network_granted = True  # what the agent sets after a person's yes
    for ctx in (granted, ctx_for(workspace, sandbox_network=True)):
        result = await Bash().run({"command": connect_command(listeners.port)}, ctx)
        assert result.content.startswith("connected"), result.content
    assert listeners.hits == before + 2


async def test_yolo_still_asks_before_a_command_gets_the_network(store, workspace, script, listeners):
    command = connect_command(listeners.port)
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": command, "network": True}}]},
        {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command": command, "network": True}}]},
        {"tool_calls": [{"id": "c3", "name": "bash", "arguments": {"command": command}}]},
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    before = listeners.hits
    answers = iter([True, False])
    log = await drive(agent, "fetch it", approve=lambda request: next(answers))
    first, second = log.approvals
    assert first.network_requested and first.summary.endswith("[asks for network access]")
    assert second.network_requested
    results = {f.call_id: f for f in log.of(ToolFinished)}
    assert results["c1"].status == "ok" and results["c1"].content.startswith("connected")
    assert results["c2"].status == "denied"
    # Without network: true nothing asks in yolo, and the sandbox keeps the command offline.
    assert results["c3"].status == "error" and "connected" not in results["c3"].content
    assert len(log.approvals) == 2 and listeners.hits == before + 1


async def test_a_user_who_allows_the_network_is_not_asked(store, workspace, script, listeners):
    command = connect_command(listeners.port)
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": command, "network": True}}]},
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo", sandbox_network=True)
    log = await drive(agent, "fetch it", approve=False)
    assert log.approvals == []
    [finished] = log.of(ToolFinished)
    assert finished.content.startswith("connected")


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(workspace), *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


async def test_pytest_runs_inside_the_sandbox_and_writes_its_cache_in_the_workspace(workspace):
    (workspace / "test_small.py").write_text("def test_adds():\n    assert 1 + 1 == 2\n")
    result = await run(workspace, f"{sys.executable} -m pytest -q test_small.py")
    assert result.status == "ok", result.content
    assert "1 passed" in result.content
    assert (workspace / ".pytest_cache").is_dir()


async def test_git_reads_work_and_git_writes_to_the_protected_dot_git_fail(workspace):
    _git(workspace, "init", "-q")
    (workspace / "tracked.txt").write_text("v1\n")
    _git(workspace, "add", "tracked.txt")
    _git(workspace, "commit", "-qm", "first")
    index_before = (workspace / ".git" / "index").read_bytes()
    result = await run(
        workspace,
        "echo new > untracked.txt && echo v2 > tracked.txt && git status --porcelain "
        "&& git log --oneline | wc -l && git diff --stat",
    )
    assert result.status == "ok", result.content
    lines = result.content.splitlines()
    assert " M tracked.txt" in lines and "?? untracked.txt" in lines and "1" in lines
    assert "tracked.txt | 2 +-" in result.content
    staged = await run(workspace, "git add untracked.txt")
    assert staged.status == "error" and "Read-only file system" in staged.content
    assert (workspace / ".git" / "index").read_bytes() == index_before


def _tiny_wheel(folder: Path) -> Path:
    """A real, minimal wheel (a zip with the three metadata files pip needs), built without
    network or build backends."""
    wheel = folder / "tinypkg-0.1-py3-none-any.whl"
    files = {
        "tinypkg/__init__.py": "VALUE = 'installed inside the sandbox'\n",
        "tinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        "tinypkg-0.1.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + "tinypkg-0.1.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("tinypkg-0.1.dist-info/RECORD", record)
    return wheel


@pytest.mark.slow
async def test_a_venv_in_the_workspace_and_an_offline_pip_install_work(workspace):
    (workspace / "dist").mkdir()
    wheel = _tiny_wheel(workspace / "dist")
    command = (
        f"{sys.executable} -m venv .venv && .venv/bin/pip install -q --no-index --disable-pip-version-check "
        f"dist/{wheel.name} && .venv/bin/python -c 'import tinypkg; print(tinypkg.VALUE)'"
    )
    result = await Bash().run({"command": command, "timeout": 300}, ctx_for(workspace))
    assert result.status == "ok", result.content
    assert "installed inside the sandbox" in result.content
    assert list((workspace / ".venv").glob("lib/python*/site-packages/tinypkg/__init__.py"))


async def test_read_only_mode_keeps_the_workspace_unchanged_but_tmp_works(workspace):
    (workspace / "keep.txt").write_text("original\n")
    result = await run(
        workspace, "echo changed > keep.txt; echo scratch > /tmp/s && cat /tmp/s; cat keep.txt", sandbox="read-only"
    )
    assert "Read-only file system" in result.content
    assert "scratch" in result.content and "original" in result.content
    assert "[sandbox (read-only): only /tmp is writable" in result.content
    assert (workspace / "keep.txt").read_text() == "original\n"


async def test_missing_protected_paths_cannot_be_created_and_leave_no_trace(workspace, monkeypatch):
    # myrm opened in the home folder: the shell's startup files are inside the workspace.
    monkeypatch.setenv("HOME", str(workspace))
    (workspace / ".bashrc").write_text("# mine\n")
    result = await run(
        workspace,
        "mkdir -p .git/hooks; echo evil > ~/.zshrc; echo evil >> ~/.bashrc; git config --global alias.x '!evil'; ls -a",
    )
    assert result.content.count("Read-only file system") >= 3, result.content
    assert (workspace / ".bashrc").read_text() == "# mine\n"
    for name in (".git", ".zshrc", ".gitconfig", ".profile", ".ssh", ".config"):
        assert not (workspace / name).exists(), f"{name} was created or its placeholder was left behind"
    assert sorted(p.name for p in workspace.iterdir()) == [".bashrc"]


async def test_placeholder_cleanup_never_removes_what_someone_else_created(workspace):
    plan = plan_for(workspace, "workspace-write", False)
    git_dir = workspace / ".git"
    assert git_dir in plan.placeholders
    git_dir.mkdir()
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")  # the user ran `git init` meanwhile
    plan.cleanup()
    assert (git_dir / "HEAD").read_text() == "ref: refs/heads/main\n"


async def test_a_workspace_inside_a_protected_folder_is_read_only(tmp_path, monkeypatch):
    config = tmp_path / "config"
    (config / "notes").mkdir(parents=True)
    monkeypatch.setenv("MYRM_CONFIG_DIR", str(config))
    assert plan_for(config / "notes", "workspace-write", False).writable is False
    result = await run(config / "notes", "echo x > f")
    assert "Read-only file system" in result.content and not (config / "notes" / "f").exists()


def test_an_unknown_mode_fails_closed_to_read_only():
    assert sandbox_status("bogus").mode == "read-only"


@pytest.fixture
def fake_bwrap(tmp_path, monkeypatch):
    """A bwrap that is installed but cannot create namespaces (as on kernels that forbid
    unprivileged user namespaces): the sandbox must say so and step aside, never pretend."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "bwrap"
    script.write_text(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\n"
        "echo 'bwrap: No permissions to create new namespace, likely because the kernel does "
        "not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    probe_bwrap.cache_clear()
    yield script
    probe_bwrap.cache_clear()


async def test_an_unusable_bwrap_is_reported_and_bash_falls_back_to_approvals(fake_bwrap, workspace, tmp_path):
    status = sandbox_status("workspace-write")
    assert not status.active and status.badge() == "no sandbox"
    assert (
        "cannot create a sandbox here" in status.problem and "No permissions to create new namespace" in status.problem
    )
    notice = status.start_notice()
    assert notice is not None
    assert notice.startswith("bash runs without a sandbox:") and "each one asks first, even in yolo" in notice
    outside = tmp_path / "outside.txt"
    result = await run(workspace, f"echo reached > {outside}")
    assert result.status == "ok" and outside.read_text() == "reached\n"  # unsandboxed, as announced


def test_a_missing_bwrap_is_reported_with_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    probe_bwrap.cache_clear()
    try:
        status = sandbox_status("workspace-write")
        assert not status.active and "bwrap was not found" in status.problem
        assert "apt install bubblewrap" in status.problem
    finally:
        probe_bwrap.cache_clear()


async def test_the_agent_says_once_at_start_when_bash_is_not_sandboxed(fake_bwrap, store, workspace, script):
    model = script({"text": "one"}, {"text": "two"})
    agent = make_agent(store, workspace, model)
    first = await drive(agent, "hi")
    second = await drive(agent, "again")
    [notice] = [n for n in first.of(Notice) if "sandbox" in n.text]
    assert notice.level == "warning" and "No permissions to create new namespace" in notice.text
    assert not [n for n in second.of(Notice) if "sandbox" in n.text]
    off = make_agent(store, workspace, script({"text": "three"}), sandbox="off")
    assert not [n for n in (await drive(off, "hi")).of(Notice) if "sandbox" in n.text]


def test_status_badges_name_what_is_not_the_default():
    assert sandbox_status("off").badge() == "sandbox off"
    assert sandbox_status("read-only").badge() == "sandbox read-only"
    assert sandbox_status("off").start_notice() is None


async def test_the_sandbox_outlives_nothing_even_when_myrm_is_killed(workspace, tmp_path):
    # --die-with-parent: if myrm itself dies mid-command, the sandbox and its children die too.
    token = "913.24681357"
    code = (
        f"import asyncio, sys; sys.path.insert(0, {str(Path(__file__).parents[2])!r}); "
        "from myrm_tui.agent.tools.base import ToolContext; from myrm_tui.agent.tools.shell.bash import Bash; "
        "from myrm_tui.settings.settings import Settings; "
        f"asyncio.run(Bash().run({{'command': 'setsid sleep {token} & echo up; wait'}}, "
        f"ToolContext(__import__('pathlib').Path({str(workspace)!r}), Settings(), None, emit=print)))"
    )
    child = await asyncio.create_subprocess_exec(sys.executable, "-u", "-c", code, stdout=asyncio.subprocess.PIPE)
    assert child.stdout is not None
    try:
        assert (await asyncio.wait_for(child.stdout.readline(), 60)).strip() == b"up"
        assert pids_with(token)
        child.kill()
        await child.wait()
        assert await all_gone(token, within=5.0), "the sandboxed child outlived the killed myrm"
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        kill_all(token)
