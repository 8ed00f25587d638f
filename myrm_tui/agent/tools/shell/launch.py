"""How a bash command is started: the argv (wrapped in bwrap when the sandbox is active), the
environment without secrets, the call's marker, and the notes that explain a sandbox refusal.

Why a module of its own: a foreground call (tools/bash.py) and a background one
(tools/bash_background.py) must start a command in exactly the same sandbox with the same
environment; only what happens after the start differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
from dataclasses import dataclass

from myrm_tui.agent.sandbox import SandboxPlan, SandboxStatus, plan_for, sandbox_status, seccomp
from myrm_tui.agent.sandbox.git_env import force_no_hooks
from myrm_tui.agent.sandbox.limits import CallCgroup, CallLimits, inner_argv, limits_for, make_cgroup
from myrm_tui.agent.shell_env import command_env, mentioned, passthrough_names, shield_own_environ
from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.shell.processes import CALL_MARKER_VAR

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
# What a program prints when the seccomp filter refused it a unix socket.
_UNIX_SOCKET_ERROR = re.compile(
    r"(?i)(socket|connect|\.sock\b|docker daemon|ssh-agent)[\s\S]{0,120}(Permission denied|EACCES)|"
    r"(Permission denied|EACCES)[\s\S]{0,80}(socket|\.sock\b)"
)
# What a shell or a runtime prints when a fork is refused at the process limit (RLIMIT_NPROC).
_FORK_REFUSED = re.compile(
    r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|BlockingIOError: \[Errno 11\]"
)


@dataclass
class Launch:
    """One command, ready to spawn. `exit_marker` is the marker to scan for once the command has
    exited on its own (None inside the sandbox: its PID namespace ended every process with it);
    `stop_marker` is the one to scan for when myrm stops it early (always set: a stop that lands
    while bwrap is still setting up, before --die-with-parent is armed, leaves the namespace's init
    running and reparented away from the group, and only the inherited marker still finds it).
    `pass_fds` (the seccomp filter) are handed to the child and closed once it has started."""

    command: str
    argv: list[str]
    env: dict[str, str]
    marker: str
    status: SandboxStatus
    plan: SandboxPlan | None
    withheld_note: str | None  # the command names variables that were kept out as secrets
    limits: CallLimits | None = None
    cgroup: CallCgroup | None = None
    pass_fds: tuple[int, ...] = ()

    @property
    def exit_marker(self) -> str | None:
        return self.marker if self.plan is None else None

    @property
    def stop_marker(self) -> str:
        return self.marker

    def started(self) -> None:
        """The child has its copy of the descriptors: close ours."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()

    def cleanup(self) -> None:
        self.started()
        if self.plan is not None:
            self.plan.cleanup()
        if self.cgroup is not None:
            self.cgroup.remove()

    def notes(self, output: str, code: int | None) -> list[str]:
        """Why the output looks like a refusal (sandbox, limits) and which variables were withheld."""
        notes = sandbox_notes(self.status, self.plan, output, code) if code is not None else []
        notes += self._limit_notes(output)
        if self.withheld_note:
            notes.append(self.withheld_note)
        return notes

    def _limit_notes(self, output: str) -> list[str]:
        if self.plan is None or self.limits is None:
            return []
        forks, memory = self.cgroup.hit() if self.cgroup is not None else (0, False)
        notes = []
        if forks or (self.limits.max_processes and _FORK_REFUSED.search(output)):
            notes.append(
                f"[sandbox: the call reached its limit of {self.limits.max_processes} processes and threads "
                "(sandbox_max_processes); further forks were refused]"
            )
        if memory:
            notes.append(
                f"[sandbox: the call reached its memory limit of {self.limits.max_memory_bytes // (1024 * 1024)} MiB "
                "(sandbox_max_memory_mb); a process was killed or refused memory]"
            )
        return notes


def launch_for(command: str, ctx: ToolContext) -> Launch:
    shield_own_environ()
    status = sandbox_status(ctx.settings.sandbox)
    marker = secrets.token_hex(12)
    built = command_env(os.environ, passthrough_names(ctx.settings.shell_env_passthrough), {CALL_MARKER_VAR: marker})
    shell = shutil.which("bash") or "/bin/sh"
    argv = [shell, "-c", command]
    hidden = mentioned(command, built.withheld)
    note = None
    if hidden:
        one = len(hidden) == 1
        note = (
            f"[{', '.join(hidden)} {'is' if one else 'are'} not passed to commands "
            f"({'it looks like a secret' if one else 'they look like secrets'}); the user can "
            "name variables to pass in shell_env_passthrough]"
        )
    if not (status.active and status.probe is not None and status.probe.path):
        return Launch(command, argv, built.env, marker, status, None, note)
    network = bool(ctx.settings.sandbox_network or ctx.network_granted)
    plan = plan_for(ctx.workspace, status.mode, network, hide=ctx.settings.sandbox_hide)
    limits = limits_for(ctx.settings.sandbox_max_processes, ctx.settings.sandbox_max_memory_mb)
    fds: tuple[int, ...] = ()
    if not network:
        program = seccomp.filter_for(seccomp.machine())
        if program is None:  # the probe already refuses such a machine; never run unfiltered
            raise RuntimeError(seccomp.unsupported_problem(seccomp.machine()))
        fds = (seccomp.filter_fd(program),)
    argv = plan.bwrap_argv(status.probe.path, inner_argv(limits, shell, command), fds[0] if fds else None)
    cgroup = make_cgroup(limits, marker)
    if cgroup is not None:
        argv = cgroup.wrap(argv)
    _sandbox_env(built.env, plan)
    return Launch(command, argv, built.env, marker, status, plan, note, limits, cgroup, fds)


def sandbox_notes(status: SandboxStatus, plan: SandboxPlan | None, output: str, code: int) -> list[str]:
    if plan is None:
        return []
    first = output.lstrip().splitlines()[0] if output.strip() else ""
    if code == 1 and first.startswith(_BWRAP_ERROR):
        return [
            (f'[the sandbox could not start ({first}); the user can set sandbox = "off" to run commands without it]')
        ]
    notes = []
    if not plan.network and _UNIX_SOCKET_ERROR.search(output):
        notes.append(
            "[sandbox: without network, unix sockets cannot be created (they could reach host services "
            "such as docker or ssh-agent); call bash again with network: true to ask the user]"
        )
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
    force_no_hooks(env)


async def spawn_piped(launch: Launch, ctx: ToolContext) -> tuple[asyncio.subprocess.Process, int]:
    """Start the launch's argv in the workspace in its own session (process group), stdout and
    stderr on one pipe; returns the process and the pipe's read end. Only the child keeps the
    write end, so EOF comes when it and every process it started have exited (or closed it)."""
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=str(ctx.workspace),
            env=launch.env,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
        launch.started()
    return proc, read_fd
