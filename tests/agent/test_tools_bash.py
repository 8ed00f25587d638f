"""bash with real subprocesses: exit codes, streaming, timeouts, kills, spills, the command
environment, and nothing outliving a call, both inside the bwrap sandbox and with it off."""

from __future__ import annotations

import asyncio
import time

import pytest

from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.shell.bash import Bash
from tests.agent.agent_helpers import settings_for
from tests.agent.process_helpers import all_gone, kill_all, pids_with, token_seconds, wait_until_running

MODES = ("workspace-write", "off")


@pytest.fixture(params=MODES)
def mode_ctx(request, workspace, store) -> ToolContext:
    return ToolContext(workspace=workspace, settings=settings_for(sandbox=request.param), vault=store.vault)


@pytest.fixture
def token():
    value = token_seconds()
    yield value
    kill_all(value)


async def test_output_exit_code_and_cwd(mode_ctx, workspace):
    chunks: list[str] = []
    mode_ctx.emit = chunks.append
    result = await Bash().run({"command": "pwd; echo err >&2; exit 3"}, mode_ctx)
    assert result.content.splitlines() == [str(workspace), "err", "[exit code 3]"]
    assert result.status == "error"
    assert "".join(chunks) == f"{workspace}\nerr\n"


async def test_no_output(mode_ctx):
    result = await Bash().run({"command": "true"}, mode_ctx)
    assert result.content == "(no output)\n[exit code 0]" and result.status == "ok"


async def test_timeout_kills_the_whole_group(mode_ctx, token):
    started = time.monotonic()
    result = await Bash().run({"command": f"sleep {token} & echo started; wait", "timeout": 1}, mode_ctx)
    assert time.monotonic() - started < 8
    assert result.status == "timeout"
    assert result.content.splitlines() == ["started", "[timed out after 1s: process group killed]"]
    assert await all_gone(token)
    assert mode_ctx.process_groups == set()


async def test_cancellation_kills_the_group(mode_ctx, token):
    task = asyncio.create_task(Bash().run({"command": f"sleep {token} & wait"}, mode_ctx))
    await wait_until_running(token)
    assert len(mode_ctx.process_groups) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await all_gone(token) and mode_ctx.process_groups == set()


@pytest.mark.slow
async def test_a_stop_while_the_sandbox_starts_up_leaves_nothing(workspace, store):
    """Stopped a few milliseconds after the call's group exists, bwrap may not have armed
    --die-with-parent yet: its namespace would outlive the group (reparented away from it) unless
    the stop also hunts the call's marker. The delays sweep the window measured on a 2-core box
    (about 2-10 ms after the spawn)."""
    ctx = ToolContext(workspace=workspace, settings=settings_for(sandbox="workspace-write"), vault=store.vault)
    for delay in (0.002, 0.004, 0.006, 0.008, 0.01) * 3:
        token = token_seconds()
        try:
            task = asyncio.create_task(Bash().run({"command": f"sleep {token} & wait"}, ctx))
            while not ctx.process_groups:
                await asyncio.sleep(0)
            await asyncio.sleep(delay)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.2)  # what bwrap had started keeps starting
            assert await all_gone(token, within=0.5), f"a process of the call stopped after {delay}s still runs"
        finally:
            kill_all(token)


async def test_sigterm_ignoring_child_gets_sigkill(mode_ctx, token):
    command = (
        f'python3 -c "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
        f"print('ready', flush=True); time.sleep({token})\""
    )
    result = await Bash().run({"command": command, "timeout": 3}, mode_ctx)
    assert result.status == "timeout" and result.content.startswith("ready")
    assert await all_gone(token)


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


# Every way a shell detaches a child; none may survive the call.
DETACHED = {
    "ampersand": "sleep {t} &",
    "nohup": "nohup sleep {t} >/dev/null 2>&1 &",
    "setsid": "setsid sleep {t} &",
    "setsid-fork": "setsid -f sleep {t}",
    "double-fork": "( setsid sleep {t} & )",
    "disown": "sleep {t} & disown",
}


@pytest.mark.parametrize("style", sorted(DETACHED))
async def test_nothing_a_call_starts_outlives_it(mode_ctx, token, style):
    started = time.monotonic()
    result = await Bash().run({"command": DETACHED[style].format(t=token) + "\necho done", "timeout": 30}, mode_ctx)
    assert time.monotonic() - started < 10  # the call does not wait for the detached child
    assert result.content.splitlines()[0] == "done" and result.status == "ok"
    assert await all_gone(token), f"{style}: {pids_with(token)} outlived the call"


async def test_a_call_that_ends_normally_reports_the_background_processes_it_stopped(workspace, store, token):
    ctx = ToolContext(workspace, settings_for(sandbox="off"), store.vault)
    result = await Bash().run({"command": f"setsid sleep {token} & echo started"}, ctx)
    assert "background process still running when the command ended: stopped" in result.content
    assert result.content.endswith("[exit code 0]")


async def test_provider_keys_and_secrets_are_not_in_the_environment(mode_ctx, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1234")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_test_5678")
    monkeypatch.setenv("PGPASSWORD", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:s3cret@db.internal/app")
    monkeypatch.setenv("MYRM_TEST_PLAIN", "plain-value")
    command = 'echo "[$OPENAI_API_KEY][$GITHUB_TOKEN][$PGPASSWORD][$DATABASE_URL][$MYRM_TEST_PLAIN]"; env'
    result = await Bash().run({"command": command}, mode_ctx)
    assert result.content.splitlines()[0] == "[][][][][plain-value]"
    for secret in ("sk-test-openai-1234", "ghp_test_5678", "hunter2", "s3cret"):
        assert secret not in result.content
    # The model is told why the variable is empty, by name, not given its value.
    assert (
        "[DATABASE_URL, GITHUB_TOKEN, OPENAI_API_KEY, PGPASSWORD are not passed to commands (they look "
        "like secrets); the user can name variables to pass in shell_env_passthrough]"
    ) in result.content


async def test_the_user_can_pass_a_named_secret(workspace, store, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_test_5678")
    monkeypatch.setenv("NPM_TOKEN", "npm_test_9")
    ctx = ToolContext(workspace, settings_for(shell_env_passthrough="GITHUB_TOKEN, not-a-name"), store.vault)
    result = await Bash().run({"command": 'echo "[$GITHUB_TOKEN][$NPM_TOKEN]"'}, ctx)
    assert result.content.splitlines()[0] == "[ghp_test_5678][]"


async def test_commands_cannot_wait_for_a_pager_or_a_password(mode_ctx):
    result = await Bash().run({"command": 'echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"'}, mode_ctx)
    assert result.content.splitlines()[0] == "cat cat 0"
