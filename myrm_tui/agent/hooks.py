"""User hooks: the commands of the user config's `[hooks]` (settings/sections/hooks.py), run at
session start, after each tool result, before a compaction and at session end.

Why commands started like bash's: a hook is the user's code, but it runs while the model works,
so it gets the same sandbox and the same secret-free environment as the model's commands
(agent/tools/shell/launch.py). It reads its context as one JSON object on stdin.

Why a hook can never break a turn: it is a side channel (a notifier, a log). A failure or a
timeout becomes a warning Notice naming the hook and its exit code and a stored `hook` event;
long output goes to the vault like a tool's, so the event stays small.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.events import Notice
from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.agent.tools.shell.launch import Launch, launch_for
from myrm_tui.agent.tools.shell.processes import kill_group_now
from myrm_tui.agent.tools.spill import spill_if_large
from myrm_tui.settings.sections.hooks import POST_TOOL, PRE_COMPACT, SESSION_END, SESSION_START, HookSpec
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.context.engine import ContextEngine

# Hook output above this (~2.5k tokens) goes to the vault and the event keeps an excerpt: the
# same size a tool result may have inline, so a chatty hook cannot bloat the event log.
HOOK_OUTPUT_CAP = 10_000
# After a timeout kill, how long to wait for the pipes to close (a child that left the process
# group may still hold them); then the output is given up on instead of hanging the turn.
_REAP_S = 1.0
# How much of a failed hook's last output line its notice quotes.
_NOTICE_LINE_CHARS = 200


RecordEvent = Callable[[str, dict[str, Any]], None]
# One finished run, before spilling: (hook, status, exit code, seconds, output).
_Ran = tuple[HookSpec, str, int | None, float, str]


@dataclass(frozen=True)
class HookOutcome:
    spec: HookSpec
    status: str  # ok, failed (non-zero exit), timeout, error (could not start)
    exit_code: int | None
    duration_s: float
    output: str  # what the event keeps: the output, or its excerpt headed by the handle
    handle: str | None  # the full output in the vault, when it was too long


@dataclass
class HookLifecycle:
    """Whether the session's start hooks ran: owned by the session (agent/session_parts.py), not
    the agent, so an agent rebuilt for a settings change does not announce a new session, and the
    end hooks run only for a session that started, once."""

    started: bool = False


class HookRunner:
    """Runs the configured hooks of one agent; `take_notices` hands over what the blocking paths
    (pre_compact inside the engine, session_end at app exit) could not yield themselves."""

    def __init__(
        self, hooks: Sequence[HookSpec], ctx: ToolContext, record_event: RecordEvent, lifecycle: HookLifecycle
    ):
        self.hooks = tuple(hooks)
        self.ctx = ctx
        self.record_event = record_event
        self.lifecycle = lifecycle
        self._pending: list[Notice] = []

    def configured(self, event: str) -> tuple[HookSpec, ...]:
        return tuple(h for h in self.hooks if h.event == event)

    def take_notices(self) -> list[Notice]:
        taken, self._pending = self._pending, []
        return taken

    def attach(self, engine: ContextEngine) -> None:
        """Give the engine this agent's pre-compact hook (the engine outlives a rebuilt agent, so
        the latest agent's hooks apply; none configured leaves the engine without one)."""
        engine.compactor.pre_compact = self.pre_compact if self.configured(PRE_COMPACT) else None

    # -- the events --------------------------------------------------------------------------
    async def session_start(self) -> list[Notice]:
        if self.lifecycle.started:
            return []
        self.lifecycle.started = True
        return await self.run(SESSION_START, {})

    async def post_tool(self, name: str, arguments: dict[str, Any], status: str, call_id: str) -> list[Notice]:
        specs = [h for h in self.configured(POST_TOOL) if _matches(h, name)]
        payload = {"tool_name": name, "tool_arguments": arguments, "tool_status": status, "call_id": call_id}
        return await self._run_specs(specs, POST_TOOL, payload)

    def pre_compact(self, data: dict[str, Any]) -> None:
        """The engine's callback (context/compaction/compactor.py), inside a synchronous assemble: the hook
        runs to its end (or timeout) there; its notices wait for the turn to yield them."""
        payload = {"tier": data.get("tier"), "tokens": data.get("tokens")}
        stdin = self._stdin(PRE_COMPACT, payload)
        for spec in self.configured(PRE_COMPACT):
            self._pending.extend(self._finish(_run_blocking(spec, stdin, self.ctx)))

    async def session_end(self) -> None:
        if not self.lifecycle.started:
            return
        self.lifecycle.started = False
        self._pending.extend(await self.run(SESSION_END, {}))

    def session_end_blocking(self) -> None:
        """App exit, from synchronous code: the end hooks run to their end or timeout."""
        if not self.lifecycle.started:
            return
        self.lifecycle.started = False
        stdin = self._stdin(SESSION_END, {})
        for spec in self.configured(SESSION_END):
            self._pending.extend(self._finish(_run_blocking(spec, stdin, self.ctx)))

    # -- running -----------------------------------------------------------------------------
    async def run(self, event: str, payload: dict[str, Any]) -> list[Notice]:
        return await self._run_specs(self.configured(event), event, payload)

    async def _run_specs(self, specs: Sequence[HookSpec], event: str, payload: dict[str, Any]) -> list[Notice]:
        if not specs:
            return []
        stdin = self._stdin(event, payload)
        notices: list[Notice] = []
        for spec in specs:
            notices.extend(self._finish(await _run_async(spec, stdin, self.ctx)))
        return notices

    def _stdin(self, event: str, payload: dict[str, Any]) -> bytes:
        context = {"event": event, "session_id": self.ctx.session_id, "workspace": str(self.ctx.workspace), **payload}
        return json.dumps(context, ensure_ascii=False, default=str).encode("utf-8")

    def _finish(self, raw: _Ran) -> list[Notice]:
        """Spill, store the event, and say so when it failed."""
        spec, status, code, duration, output = raw
        text, handle = spill_if_large(
            output, HOOK_OUTPUT_CAP, self.ctx.vault, tool="hook", filters=self.ctx.settings.output_filters
        )
        outcome = HookOutcome(spec, status, code, round(duration, 3), text, handle)
        self.record_event(
            event_kinds.HOOK,
            {
                "event": spec.event,
                "command": spec.command,
                "status": outcome.status,
                "exit_code": outcome.exit_code,
                "duration_s": outcome.duration_s,
                "output": outcome.output,
                "handle": outcome.handle,
            },
        )
        return [] if status == "ok" else [Notice(failure_text(outcome, output), level="warning")]


def failure_text(outcome: HookOutcome, output: str) -> str:
    spec = outcome.spec
    if outcome.status == "timeout":
        what = f"timed out after {spec.timeout_s:g}s and was stopped (exit code {outcome.exit_code})"
    elif outcome.status == "error":
        what = "could not start"
    else:
        what = f"failed (exit code {outcome.exit_code})"
    text = f"{spec.event} hook `{spec.command}` {what}"
    lines = [line for line in output.strip().splitlines() if line.strip()]
    if lines:
        text += f": {lines[-1].strip()[:_NOTICE_LINE_CHARS]}"
    if outcome.handle:
        text += f" (full output: {outcome.handle})"
    return text


def _matches(spec: HookSpec, tool: str) -> bool:
    return not spec.tools or any(fnmatch.fnmatchcase(tool, pattern) for pattern in spec.tools)


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


async def _run_async(spec: HookSpec, stdin: bytes, ctx: ToolContext) -> _Ran:
    launch = launch_for(spec.command, ctx)
    started = time.monotonic()
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=str(ctx.workspace),
                env=launch.env,
                start_new_session=True,  # its own group: a timeout ends the hook and its children
            )
        except OSError as exc:
            return spec, "error", None, time.monotonic() - started, str(exc)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(stdin), spec.timeout_s)
        except TimeoutError:
            kill_group_now(proc.pid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), _REAP_S)
            return spec, "timeout", proc.returncode, time.monotonic() - started, ""
        except BaseException:  # an interrupt: the hook must not outlive the turn
            kill_group_now(proc.pid)
            raise
        code = proc.returncode
        return spec, "ok" if code == 0 else "failed", code, time.monotonic() - started, _decode(out)
    finally:
        _cleanup(launch)


def _run_blocking(spec: HookSpec, stdin: bytes, ctx: ToolContext) -> _Ran:
    launch = launch_for(spec.command, ctx)
    started = time.monotonic()
    try:
        try:
            proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=str(ctx.workspace),
                env=launch.env,
                start_new_session=True,
            )
        except OSError as exc:
            return spec, "error", None, time.monotonic() - started, str(exc)
        try:
            out, _ = proc.communicate(stdin, timeout=spec.timeout_s)
        except subprocess.TimeoutExpired:
            kill_group_now(proc.pid)
            try:
                out, _ = proc.communicate(timeout=_REAP_S)
            except subprocess.TimeoutExpired:
                out = b""
            return spec, "timeout", proc.returncode, time.monotonic() - started, _decode(out)
        code = proc.returncode
        return spec, "ok" if code == 0 else "failed", code, time.monotonic() - started, _decode(out)
    finally:
        _cleanup(launch)


def _cleanup(launch: Launch) -> None:
    with contextlib.suppress(OSError):
        launch.cleanup()
