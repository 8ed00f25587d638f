"""How a bash command is started: the argv (wrapped in bwrap when the sandbox is active), the
environment without secrets, the call's marker, and the notes that explain a sandbox refusal.

Why a module of its own: a foreground call (tools/bash.py) and a background one
(tools/bash_background.py) must start a command in exactly the same sandbox with the same
environment; only what happens after the start differs.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
from dataclasses import dataclass

from myrm_tui.agent.sandbox import SandboxPlan, SandboxStatus, plan_for, sandbox_status
from myrm_tui.agent.shell_env import command_env, mentioned, passthrough_names
from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.processes import CALL_MARKER_VAR

# After the shell exits, children it left may still hold the pipe open (`server &`); read what
# is already there for this long, then stop listening instead of hanging.
POST_EXIT_DRAIN_S = 0.5
# Output shapes that mean "the sandbox said no", to tell the model why instead of letting it
# retry blindly.
_READ_ONLY_ERROR = re.compile(r"Read-only file system|EROFS")
_NETWORK_ERROR = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"Name or service not known|getaddrinfo|EAI_AGAIN|ENETUNREACH|No route to host|"
    r"Connection refused|ECONNREFUSED"
)
# bwrap's own failures (a mount it could not make) start with this and exit with code 1.
_BWRAP_ERROR = "bwrap: "


@dataclass(frozen=True)
class Launch:
    """One command, ready to spawn. `kill_marker` is the marker to scan for when ending it (None
    inside the sandbox: its PID namespace already ends every process)."""

    command: str
    argv: list[str]
    env: dict[str, str]
    marker: str
    status: SandboxStatus
    plan: SandboxPlan | None
    withheld_note: str | None  # the command names variables that were kept out as secrets

    @property
    def kill_marker(self) -> str | None:
        return self.marker if self.plan is None else None

    def cleanup(self) -> None:
        if self.plan is not None:
            self.plan.cleanup()

    def notes(self, output: str, code: int | None) -> list[str]:
        """Why the output looks like a refusal (sandbox) and which variables were withheld."""
        notes = sandbox_notes(self.status, self.plan, output, code) if code is not None else []
        if self.withheld_note:
            notes.append(self.withheld_note)
        return notes


def launch_for(command: str, ctx: ToolContext) -> Launch:
    status = sandbox_status(ctx.settings.sandbox)
    marker = secrets.token_hex(12)
    built = command_env(os.environ, passthrough_names(ctx.settings.shell_env_passthrough), {CALL_MARKER_VAR: marker})
    shell = shutil.which("bash") or "/bin/sh"
    argv = [shell, "-c", command]
    plan: SandboxPlan | None = None
    if status.active and status.probe is not None and status.probe.path:
        plan = plan_for(ctx.workspace, status.mode, bool(ctx.settings.sandbox_network or ctx.network_granted))
        argv = plan.bwrap_argv(status.probe.path, argv)
        _sandbox_env(built.env, plan)
    hidden = mentioned(command, built.withheld)
    note = None
    if hidden:
        one = len(hidden) == 1
        note = (
            f"[{', '.join(hidden)} {'is' if one else 'are'} not passed to commands "
            f"({'it looks like a secret' if one else 'they look like secrets'}); the user can "
            "name variables to pass in shell_env_passthrough]"
        )
    return Launch(command, argv, built.env, marker, status, plan, note)


def sandbox_notes(status: SandboxStatus, plan: SandboxPlan | None, output: str, code: int) -> list[str]:
    if plan is None:
        return []
    first = output.lstrip().splitlines()[0] if output.strip() else ""
    if code == 1 and first.startswith(_BWRAP_ERROR):
        return [
            (f'[the sandbox could not start ({first}); the user can set sandbox = "off" to run commands without it]')
        ]
    notes = []
    if _READ_ONLY_ERROR.search(output):
        where = "the workspace and /tmp are" if plan.writable else "only /tmp is"
        notes.append(f"[sandbox ({status.mode}): {where} writable; .git, .myrm and files outside are read-only]")
    if not plan.network and _NETWORK_ERROR.search(output):
        notes.append(
            "[sandbox: no network, not even the host's localhost; call bash again with "
            "network: true to ask the user for it]"
        )
    return notes


def _sandbox_env(env: dict[str, str], plan: SandboxPlan) -> None:
    """Point temp files and caches at the private /tmp: $HOME is read-only in the sandbox, and a
    TMPDIR outside the workspace would not be writable."""
    tmpdir = env.get("TMPDIR", "")
    if not (tmpdir and plan.writable and os.path.abspath(tmpdir).startswith(str(plan.workspace) + os.sep)):
        env["TMPDIR"] = "/tmp"
    env["XDG_CACHE_HOME"] = "/tmp/.cache"
    env["npm_config_cache"] = "/tmp/.npm"


async def spawn_piped(argv: list[str], env: dict[str, str], ctx: ToolContext) -> tuple[asyncio.subprocess.Process, int]:
    """Start `argv` in the workspace in its own session (process group), stdout and stderr on one
    pipe; returns the process and the pipe's read end. Only the child keeps the write end, so EOF
    comes when it and every process it started have exited (or closed it)."""
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=str(ctx.workspace),
            env=env,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    return proc, read_fd
