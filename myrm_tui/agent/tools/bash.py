"""bash: run a shell command in the workspace, streaming its output, with a hard timeout.

Output is decoded leniently (invalid UTF-8 becomes U+FFFD, NUL bytes are dropped and noted) so
a stray binary never breaks the transcript; above `tool_output_cap` characters the full output
goes to the vault and the result keeps a head, a tail and the handle.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
from typing import Any, ClassVar

from myrm_tui.agent.limits import BASH_MAX_CAPTURE_CHARS, BASH_MAX_TIMEOUT_S, KILL_GRACE_S
from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.processes import kill_group
from myrm_tui.agent.tools.spill import spill_if_large

# After the shell exits, background children may still hold the pipe open (`server &`);
# read what is already there for this long, then stop listening instead of hanging.
POST_EXIT_DRAIN_S = 0.5
# Commands must not wait for a pager or a password prompt that nobody will ever answer.
NON_INTERACTIVE_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class _Capture:
    """Accumulates decoded output, bounded in memory, and streams each piece out."""

    def __init__(self, emit) -> None:
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
    raw = args.get("timeout")
    value = float(ctx.settings.bash_timeout if raw in (None, 0) else raw)
    if value <= 0:
        raise ToolError("timeout must be a positive number of seconds.")
    return min(value, BASH_MAX_TIMEOUT_S)


def _format_seconds(value: float) -> str:
    return f"{value:g}s"


class Bash(Tool):
    name = "bash"
    kind = "exec"
    description = (
        "Run a shell command (bash -c) in the workspace root; stdout and stderr are combined. "
        "No stdin. Killed with its whole process group on timeout. Big outputs are saved to the "
        "vault and shown as head+tail with a vault:// handle."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "timeout": {"type": "number", "description": "Seconds before the command is killed."},
        },
        "required": ["command"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        _timeout_for(args, ctx)
        return ApprovalPreview(summary=str(args["command"]))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str(args["command"])
        if not command.strip():
            raise ToolError("The command is empty.")
        timeout = _timeout_for(args, ctx)
        shell = shutil.which("bash") or "/bin/sh"
        loop = asyncio.get_running_loop()
        capture = _Capture(ctx.emit)
        read_fd, write_fd = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                shell, "-c", command, stdin=asyncio.subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                cwd=str(ctx.workspace), env={**os.environ, **NON_INTERACTIVE_ENV}, start_new_session=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # only the child keeps a write end: EOF comes when it (and its kids) exit
        pgid = proc.pid
        ctx.process_groups.add(pgid)
        protocol = _PipeProtocol(capture, loop.create_future())
        transport, _ = await loop.connect_read_pipe(lambda: protocol, os.fdopen(read_fd, "rb", buffering=0))
        waiter = asyncio.ensure_future(proc.wait())
        notes: list[str] = []
        timed_out = False
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
            timed_out = waiter not in done
            if timed_out:
                await kill_group(pgid)
                # Let the SIGKILL land and the shell be reaped before reporting.
                await asyncio.wait({waiter}, timeout=KILL_GRACE_S)
            done, _ = await asyncio.wait({protocol.closed}, timeout=POST_EXIT_DRAIN_S)
            if not done and not timed_out:
                notes.append("[background processes still hold the output open; stopped reading]")
        except asyncio.CancelledError:
            await kill_group(pgid)
            await asyncio.wait({waiter}, timeout=KILL_GRACE_S)
            raise
        finally:
            transport.close()
            if not waiter.done():
                waiter.cancel()
            ctx.process_groups.discard(pgid)

        output = capture.text()
        if capture.binary:
            notes.append("[output held binary data: NUL bytes dropped, invalid UTF-8 shown as \ufffd]")
        if capture.dropped:
            notes.append(f"[{capture.dropped:,} further chars not kept: output above the in-memory limit]")
        inline, handle = spill_if_large(output, ctx.settings.tool_output_cap, ctx.vault)
        body = inline.rstrip("\n") if inline.strip() else "(no output)"
        if timed_out:
            notes.append(f"[timed out after {_format_seconds(timeout)}: process group killed]")
            return ToolResult("\n".join([body, *notes]), status="timeout", vault_handle=handle)
        code = waiter.result()
        notes.append(f"[exit code {code}]")
        return ToolResult("\n".join([body, *notes]), status="ok" if code == 0 else "error", vault_handle=handle)
