"""bash: run a shell command in the workspace, streaming its output, with a hard timeout.

The command runs inside the bwrap sandbox (agent/sandbox.py) unless the `sandbox` setting is off
or bwrap cannot run here; its environment has secrets removed (agent/shell_env.py). Nothing it
starts outlives the call: when the shell exits, times out or is interrupted, its group, its
descendants and anything still carrying the call's marker are ended (tools/processes.py). With
`background: true` the command is handed to the session's background jobs instead
(tools/bash_background.py) and the call returns a handle at once.

Output is decoded leniently (invalid UTF-8 becomes U+FFFD, NUL bytes are dropped and noted) so
a stray binary never breaks the transcript; above `tool_output_cap` characters the full output
goes to the vault and the result keeps a head, a tail and the handle.
"""

from __future__ import annotations

import asyncio
import codecs
import os
from collections.abc import Callable
from typing import Any

from myrm_tui.agent.limits import BASH_MAX_CAPTURE_CHARS, KILL_GRACE_S
from myrm_tui.agent.sandbox import no_sandbox_reason, sandbox_status
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.shell.background import start_background
from myrm_tui.agent.tools.shell.launch import POST_EXIT_DRAIN_S, Launch, launch_for, spawn_piped
from myrm_tui.agent.tools.shell.processes import end_call
from myrm_tui.agent.tools.spill import spill_if_large


class _Capture:
    """Accumulates decoded output, bounded in memory, and streams each piece out."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._size = 0
        self.dropped = 0
        self.binary = False
        self._emit = emit

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if "\x00" in text:
            self.binary = True
            text = text.replace("\x00", "")
        if not text:
            return
        if "\ufffd" in text:
            self.binary = True
        room = BASH_MAX_CAPTURE_CHARS - self._size
        if room <= 0:
            self.dropped += len(text)
            return
        kept = text[:room]
        self.dropped += len(text) - len(kept)
        self._parts.append(kept)
        self._size += len(kept)
        self._emit(kept)

    def text(self) -> str:
        return "".join(self._parts)


class _PipeProtocol(asyncio.Protocol):
    """Reads the command's output pipe into a _Capture; `closed` resolves at end of stream.

    Why our own pipe rather than asyncio's PIPE: asyncio's `Process.wait()` also waits for its
    pipes to close, which a background child (`server &`) can hold open for hours. With a pipe
    we own, the exit code arrives when the shell exits, and we close our end when we are done.
    """

    def __init__(self, capture: _Capture, closed: asyncio.Future[None]):
        self._capture = capture
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self._capture.feed(data)

    def eof_received(self) -> bool:
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._capture.feed(b"", final=True)
        if not self.closed.done():
            self.closed.set_result(None)


def _timeout_for(args: dict[str, Any], ctx: ToolContext) -> float:
    """The model's timeout (or bash_timeout), never above the user's bash_timeout_max: a model, or
    a workspace file setting bash_timeout, must not hold a call for an hour."""
    raw = args.get("timeout")
    try:
        value = float(ctx.settings.bash_timeout if raw in (None, 0) else raw)
    except (TypeError, ValueError) as exc:
        raise ToolError("timeout must be a number of seconds.") from exc
    if not value > 0:
        raise ToolError("timeout must be a positive number of seconds.")
    return min(value, ctx.settings.bash_timeout_max)


def _private_tmp_note(launch: Launch, output: str, code: int | None) -> list[str]:
    """A failed sandboxed command that found nothing under /tmp: the sandbox's /tmp is its own
    empty one (agent/sandbox.py), which a bare "No such file or directory" does not say."""
    if launch.plan is None or not code:
        return []
    if not any("/tmp" in line and "No such file or directory" in line for line in output.splitlines()):
        return []
    return [
        "[sandbox: /tmp in here is private and starts empty; files under the machine's /tmp are not "
        "visible. Ask the user to put what the command needs in the workspace]"
    ]


def _capped_note(args: dict[str, Any], ctx: ToolContext, timeout: float) -> list[str]:
    raw = args.get("timeout")
    if raw in (None, 0) or float(raw) <= timeout:
        return []
    return [f"[timeout {float(raw):g}s asked; capped at {timeout:g}s (the user's bash_timeout_max)]"]


def _format_seconds(value: float) -> str:
    return f"{value:g}s"


def _network_needs_yes(args: dict[str, Any], ctx: ToolContext) -> bool:
    """The model asked for the network, the sandbox would otherwise cut it, and the user has not
    allowed it for every command."""
    return (
        bool(args.get("network")) and not ctx.settings.sandbox_network and sandbox_status(ctx.settings.sandbox).active
    )


class Bash(Tool):
    name = "bash"
    kind = "exec"
    description = (
        "Run a shell command (bash -c) in the workspace root; stdout and stderr are combined. "
        "No stdin. Killed with its whole process group on timeout. Big outputs are saved to the "
        "vault and shown as head+tail with a vault:// handle. Usually sandboxed: only the workspace "
        "and /tmp are writable, .git and .myrm are read-only, there is no network unless you set "
        "network: true (the user is asked), and secrets are not in the environment. Processes a "
        "command leaves behind end with the call; for a server or watcher that must keep running, "
        "set background: true: the call returns a handle (bg-1) at once, bash_output reads its new "
        "output, bash_kill stops it, and it is stopped when the session ends."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "timeout": {
                "type": "number",
                "description": "Seconds before the command is killed (capped by the user's bash_timeout_max).",
            },
            "network": {
                "type": "boolean",
                "description": "The command needs the network (downloads, installs, git fetch); asks the user.",
            },
            "background": {
                "type": "boolean",
                "description": "Start it and return a handle at once; no timeout unless one is given.",
            },
        },
        "required": ["command"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        _timeout_for(args, ctx)
        summary = str(args["command"])
        if args.get("background"):
            summary = f"{summary}   [background]"
        if _network_needs_yes(args, ctx):
            return ApprovalPreview(summary=f"{summary}   [asks for network access]", network_requested=True)
        return ApprovalPreview(summary=summary)

    def required_approval(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """A yes is needed, even in yolo, when the command asks for the network, and for every
        command while a configured sandbox cannot start (a headless run then refuses bash)."""
        status = sandbox_status(ctx.settings.sandbox)
        if status.broken:
            return no_sandbox_reason(status)
        return "the command asks for network access" if _network_needs_yes(args, ctx) else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str(args["command"])
        if not command.strip():
            raise ToolError("The command is empty.")
        timeout = _timeout_for(args, ctx)
        if args.get("background"):
            explicit = timeout if args.get("timeout") not in (None, 0) else None
            return await start_background(command, explicit, ctx)
        launch = launch_for(command, ctx)
        try:
            result, code = await self._spawn(launch, timeout, ctx, args)
            notes = [
                *_capped_note(args, ctx, timeout),
                *launch.notes(result.content, code),
                *_private_tmp_note(launch, result.content, code),
            ]
        finally:
            launch.cleanup()
        if not notes:
            return result
        lines = result.content.split("\n")
        return ToolResult("\n".join([*lines[:-1], *notes, lines[-1]]), result.status, result.vault_handle)

    async def _spawn(
        self, launch: Launch, timeout: float, ctx: ToolContext, args: dict[str, Any]
    ) -> tuple[ToolResult, int | None]:
        loop = asyncio.get_running_loop()
        capture = _Capture(ctx.emit)
        # Once the command exits on its own inside the sandbox, its PID namespace has ended every
        # process; a stop (timeout, cancel) may land before bwrap arms that, so it always scans.
        marker, stop_marker = launch.exit_marker, launch.stop_marker
        proc, read_fd = await spawn_piped(launch, ctx)
        pgid = proc.pid
        ctx.process_groups.add(pgid)
        protocol = _PipeProtocol(capture, loop.create_future())
        waiter = asyncio.ensure_future(proc.wait())
        transport: asyncio.ReadTransport | None = None
        notes: list[str] = []
        timed_out = False
        # From here on the process runs: a cancellation at any await (connecting the pipe
        # included) must end it, or the call outlives the turn that started it.
        try:
            transport, _ = await loop.connect_read_pipe(lambda: protocol, os.fdopen(read_fd, "rb", buffering=0))
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
            timed_out = waiter not in done
            if timed_out:
                await end_call(pgid, stop_marker, tree=True)
                # Let the SIGKILL land and the shell be reaped before reporting.
                await asyncio.wait({waiter}, timeout=KILL_GRACE_S)
            else:
                # Nothing a call starts outlives it: `server &`, nohup and setsid children end here.
                stopped = await end_call(pgid, marker, tree=False)
                if stopped:
                    notes.append(
                        f"[{stopped} background process{'es' if stopped > 1 else ''} still running "
                        "when the command ended: stopped (nothing outlives a bash call)]"
                    )
            drained, _ = await asyncio.wait({protocol.closed}, timeout=POST_EXIT_DRAIN_S)
            if not drained and not timed_out:
                notes.append("[background processes still hold the output open; stopped reading]")
        except asyncio.CancelledError:
            await end_call(pgid, stop_marker, tree=not waiter.done())
            await asyncio.wait({waiter}, timeout=KILL_GRACE_S)
            raise
        finally:
            if transport is not None:
                transport.close()
            if not waiter.done():
                waiter.cancel()
            ctx.process_groups.discard(pgid)

        output = capture.text()
        if capture.binary:
            notes.append("[output held binary data: NUL bytes dropped, invalid UTF-8 shown as \ufffd]")
        if capture.dropped:
            notes.append(f"[{capture.dropped:,} further chars not kept: output above the in-memory limit]")
        # With the tool and its command, as every other tool's output is spilled (tool_runner) and as
        # the replay feeds bash results: the command picks the compressor (pytest, git, a user filter).
        inline, handle = spill_if_large(
            output,
            ctx.settings.tool_output_cap,
            ctx.vault,
            tool=self.name,
            arguments=args,
            filters=ctx.settings.output_filters,
        )
        body = inline.rstrip("\n") if inline.strip() else "(no output)"
        if timed_out:
            notes.append(f"[timed out after {_format_seconds(timeout)}: process group killed]")
            return ToolResult("\n".join([body, *notes]), status="timeout", vault_handle=handle), None
        code = waiter.result()
        notes.append(f"[exit code {code}]")
        status = "ok" if code == 0 else "error"
        return ToolResult("\n".join([body, *notes]), status=status, vault_handle=handle), code
