"""Background commands: `bash` with `background: true` starts the command and returns a handle
(`bg-1`) at once; `bash_output` reads what it printed since the last read, `bash_kill` stops it.

Why: a dev server, a file watcher or a long build must keep running while the model does other
work, and its output must not be lost when nobody reads it in time. A background command starts
exactly like a foreground one (tools/bash_launch.py: same sandbox, same environment, same
approval); what differs is that nothing waits for it. Its output is kept in memory up to
MEMORY_CHARS, then goes to the vault in pieces that are indexed for ctx_search at once, so a
chatty process never grows RAM and its output stays findable even if it is never read. Every
command still running is stopped when the session's agent closes (`BackgroundJobs.aclose`, or
`kill_now` at app exit), when the event loop that watches it ends, and at interpreter exit.

Why the interpreter-exit net is registered per session (`atexit.register` of its own bound method
while it has a command running, unregistered once none is) and not kept in a module-level set of
every session: the session's runtime owns its commands and closes them; the net only stands in
for a close that never came, and holds a session alive only while it has a process to stop.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import itertools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from myrm_tui.agent.limits import BASH_MAX_CAPTURE_CHARS, KILL_GRACE_S
from myrm_tui.agent.tools.base import ToolContext, ToolError, ToolResult
from myrm_tui.agent.tools.shell.launch import POST_EXIT_DRAIN_S, Launch, launch_for, spawn_piped
from myrm_tui.agent.tools.shell.processes import end_call, kill_call_now

# At most this many background commands run at once per session: enough for a server, a watcher
# and a couple of long builds; more is almost always a model starting the same server in a loop.
MAX_RUNNING = 8
# Unread output kept in memory per command before it goes to the vault: a busy build log between
# two reads fits; a runaway `yes` becomes 1 MiB vault pieces instead of growing RAM.
MEMORY_CHARS = 1024 * 1024
# Output kept per command (memory and vault together), as for a foreground call; beyond it the
# characters are counted and reported, not kept, so a runaway process cannot fill the disk.
MAX_OUTPUT_CHARS = BASH_MAX_CAPTURE_CHARS
HANDLE_PREFIX = "bg-"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BackgroundInfo:
    """One background command, as a list in the UI shows it."""

    handle: str
    command: str
    running: bool
    exit_code: int | None  # None while running; negative: ended by that signal
    bytes: int  # output received so far
    stopped: str = ""  # why myrm ended it ("bash_kill", "timeout", "session closed"); "" if it exited


@dataclass(frozen=True)
class BackgroundStarted:
    """Told to `BackgroundJobs` listeners when a command starts (for the UI's list)."""

    info: BackgroundInfo


@dataclass(frozen=True)
class BackgroundEnded:
    """Told to listeners when a command has exited or been stopped and its output is drained."""

    info: BackgroundInfo


BackgroundEvent = BackgroundStarted | BackgroundEnded


@dataclass(frozen=True)
class UnreadOutput:
    """What a command printed since the last read: `pieces` already in the vault (handle, chars),
    then `text` still in memory."""

    pieces: tuple[tuple[str, int], ...]
    text: str
    dropped: int  # characters not kept (above MAX_OUTPUT_CHARS, or no vault to put them in)
    binary: bool


class _Job:
    def __init__(self, handle: str, launch: Launch, proc: asyncio.subprocess.Process, ctx: ToolContext):
        self.handle = handle
        self.launch = launch
        self.proc = proc
        self.pgid = proc.pid
        self._ctx = ctx  # vault, store and session for the pieces that go to the vault
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._unread: list[str] = []
        self._unread_chars = 0
        self._pieces: list[tuple[str, int]] = []
        self._dropped = 0
        self._binary = False
        self.kept = 0
        self.bytes = 0
        self.exit_code: int | None = None
        self.stopped = ""
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.ReadTransport | None = None
        self.watcher: asyncio.Task[None] | None = None
        self.ended = False  # exited or stopped, and its output drained

    @property
    def running(self) -> bool:
        return not self.ended

    def info(self) -> BackgroundInfo:
        return BackgroundInfo(self.handle, self.launch.command, self.running, self.exit_code, self.bytes, self.stopped)

    def feed(self, data: bytes, final: bool = False) -> None:
        self.bytes += len(data)
        text = self._decoder.decode(data, final=final)
        if "\x00" in text:
            self._binary = True
            text = text.replace("\x00", "")
        if "\ufffd" in text:
            self._binary = True
        kept = text[: max(0, MAX_OUTPUT_CHARS - self.kept)]
        self._dropped += len(text) - len(kept)
        if not kept:
            return
        self.kept += len(kept)
        self._unread.append(kept)
        self._unread_chars += len(kept)
        if self._unread_chars > MEMORY_CHARS:
            self.to_vault()

    def to_vault(self) -> None:
        """Move the unread output in memory to the vault and index it for this session's ctx_search.
        Without a vault (a bare tool test) the oldest part is dropped instead, counted."""
        text = "".join(self._unread)
        if not text:
            return
        self._unread, self._unread_chars = [], 0
        vault = self._ctx.vault
        handle = None
        if vault is not None:
            try:
                handle = vault.put(text, suffix=".txt")
            except Exception:  # noqa: BLE001 - a full disk must not kill the reader; count the loss
                _log.warning("background output of %s could not go to the vault", self.handle, exc_info=True)
        if handle is None:
            keep = text[-MEMORY_CHARS:]
            self._dropped += len(text) - len(keep)
            self._unread, self._unread_chars = [keep], len(keep)
            return
        self._pieces.append((handle, len(text)))
        store, session_id = self._ctx.store, self._ctx.session_id
        if store is not None and session_id:
            try:
                store.index_artifact(session_id, handle, text)
            except Exception:  # noqa: BLE001 - the text is in the vault; only its search entry is missing
                _log.warning("background output %s of %s was not indexed", handle, self.handle, exc_info=True)

    def take_unread(self) -> UnreadOutput:
        unread = UnreadOutput(tuple(self._pieces), "".join(self._unread), self._dropped, self._binary)
        self._unread, self._unread_chars, self._pieces, self._dropped, self._binary = [], 0, [], 0, False
        return unread

    async def watch(self, timeout: float | None, on_end: Callable[[_Job], None]) -> None:
        """Wait for the command to exit (or its timeout), end what it left behind, drain its output.
        Cancelled (its event loop is ending): stop it at once."""
        try:
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.stopped = "timeout"
                await end_call(self.pgid, self.launch.stop_marker, tree=True)
                await asyncio.wait({asyncio.ensure_future(self.proc.wait())}, timeout=KILL_GRACE_S)
            else:
                # As in the foreground, nothing the command started outlives it (`server &` inside).
                await end_call(self.pgid, self.launch.exit_marker, tree=False)
            await asyncio.wait({self.closed}, timeout=POST_EXIT_DRAIN_S)
        except asyncio.CancelledError:
            self.kill_now("session closed")
            raise
        finally:
            if self.transport is not None:
                self.transport.close()
            self.launch.cleanup()
            self.exit_code = self.proc.returncode
            self.ended = True
            on_end(self)

    def kill_now(self, why: str) -> None:
        if self.exit_code is None and self.proc.returncode is None:
            self.stopped = self.stopped or why
            kill_call_now(self.pgid, self.launch.stop_marker)


class _Pipe(asyncio.Protocol):
    """Feeds the command's output pipe into its job; resolves `closed` at end of stream. Our own
    pipe, as in bash.py, so the exit is seen even while a child still holds the pipe open."""

    def __init__(self, job: _Job):
        self._job = job

    def data_received(self, data: bytes) -> None:
        self._job.feed(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._job.feed(b"", final=True)
        if not self._job.closed.done():
            self._job.closed.set_result(None)


class BackgroundJobs:
    """A session's background commands: start, read, stop, list, and stop all at the end.

    Listeners (`subscribe`) hear BackgroundStarted/BackgroundEnded as they happen, from the event
    loop's thread; the UI keeps its list from them or reads `listing()`."""

    def __init__(self) -> None:
        self._jobs: dict[str, _Job] = {}
        self._numbers = itertools.count(1)
        self._listeners: list[Callable[[BackgroundEvent], None]] = []
        self._exit_net = False  # `_stop_at_exit` is registered with atexit

    def subscribe(self, listener: Callable[[BackgroundEvent], None]) -> Callable[[], None]:
        """Call `listener` on every start and end; returns the function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def listing(self) -> list[BackgroundInfo]:
        return [job.info() for job in self._jobs.values()]

    def running(self) -> list[BackgroundInfo]:
        return [info for info in self.listing() if info.running]

    async def start(self, command: str, timeout: float | None, ctx: ToolContext) -> ToolResult:
        running = [job.handle for job in self._jobs.values() if job.running]
        if len(running) >= MAX_RUNNING:
            raise ToolError(
                f"{len(running)} background commands are already running ({', '.join(running)}), the most "
                "a session may have; stop one with bash_kill first."
            )
        launch = launch_for(command, ctx)
        try:
            proc, read_fd = await spawn_piped(launch, ctx)
        except BaseException:
            launch.cleanup()
            raise
        job = _Job(f"{HANDLE_PREFIX}{next(self._numbers)}", launch, proc, ctx)
        self._jobs[job.handle] = job
        self._arm_exit_net()
        job.watcher = asyncio.create_task(job.watch(timeout, self._ended), name=f"bash-background:{job.handle}")
        try:
            loop = asyncio.get_running_loop()
            job.transport, _ = await loop.connect_read_pipe(lambda: _Pipe(job), os.fdopen(read_fd, "rb", buffering=0))
        except BaseException:
            job.kill_now("could not read its output")
            raise
        self._notify(BackgroundStarted(job.info()))
        lines = [
            f"started in the background as {job.handle}"
            + (f" (stopped after {timeout:g}s)" if timeout is not None else "")
            + f'. Read its new output with bash_output("{job.handle}"); stop it with bash_kill("{job.handle}"). '
            "It is stopped when the session ends.",
        ]
        if launch.withheld_note:
            lines.append(launch.withheld_note)
        return ToolResult("\n".join(lines))

    def get(self, handle: str) -> _Job:
        job = self._jobs.get(handle.strip())
        if job is None:
            known = ", ".join(self._jobs) or "none started in this session"
            raise ToolError(f"there is no background command {handle!r}; the handles are: {known}.")
        return job

    async def wait(self, handle: str, seconds: float) -> None:
        """Wait until the command has ended or `seconds` have passed."""
        job = self.get(handle)
        if job.watcher is not None and seconds > 0:
            await asyncio.wait({job.watcher}, timeout=seconds)

    async def kill(self, handle: str) -> _Job:
        job = self.get(handle)
        if job.running:
            job.stopped = "bash_kill"
            await end_call(job.pgid, job.launch.stop_marker, tree=True)
            assert job.watcher is not None
            await asyncio.wait({job.watcher}, timeout=KILL_GRACE_S + POST_EXIT_DRAIN_S + 1.0)
        return job

    async def aclose(self) -> list[BackgroundInfo]:
        """End of the session: stop every running command (SIGTERM, a grace period, SIGKILL) and
        put the output nobody read into the vault, indexed, so it can still be searched. Returns
        the commands that were still running."""
        stopped = [job for job in self._jobs.values() if job.running]
        for job in stopped:
            job.stopped = "session closed"
        await asyncio.gather(*(end_call(job.pgid, job.launch.stop_marker, tree=True) for job in stopped))
        watchers = {job.watcher for job in stopped if job.watcher is not None}
        if watchers:
            await asyncio.wait(watchers, timeout=KILL_GRACE_S + POST_EXIT_DRAIN_S + 1.0)
        self._keep_unread()
        self._disarm_exit_net()
        return [job.info() for job in stopped]

    def kill_now(self, *, keep_output: bool = True) -> list[BackgroundInfo]:
        """Synchronous last resort (app exit): SIGKILL every running command and put what was
        already read from it in the vault (not at interpreter exit: the store is closed by then)."""
        stopped = [job for job in self._jobs.values() if job.running]
        for job in stopped:
            job.kill_now("session closed")
        if keep_output:
            self._keep_unread()
        self._disarm_exit_net()
        return [job.info() for job in stopped]

    def _keep_unread(self) -> None:
        for job in self._jobs.values():
            with contextlib.suppress(Exception):
                job.to_vault()

    def _ended(self, job: _Job) -> None:
        self._disarm_exit_net()
        self._notify(BackgroundEnded(job.info()))

    def _arm_exit_net(self) -> None:
        """Interpreter exit stops this session's commands if nobody closed it (without the sandbox a
        background command would otherwise outlive myrm; inside it, bwrap's --die-with-parent does)."""
        if not self._exit_net:
            atexit.register(self._stop_at_exit)
            self._exit_net = True

    def _disarm_exit_net(self) -> None:
        """No command of this session runs any more: the exit net lets go of it."""
        if self._exit_net and not any(job.running for job in self._jobs.values()):
            atexit.unregister(self._stop_at_exit)
            self._exit_net = False

    def _stop_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.kill_now(keep_output=False)

    def _notify(self, event: BackgroundEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a display bug must not stop the command's bookkeeping
                _log.warning("a background-command listener failed", exc_info=True)


async def start_background(command: str, timeout: float | None, ctx: ToolContext) -> ToolResult:
    """bash's `background: true`: hand the command to the session's jobs."""
    if ctx.background is None:
        raise ToolError("background commands are not available here; run the command without background.")
    jobs: BackgroundJobs = ctx.background
    return await jobs.start(command, timeout, ctx)
