"""The app's side of the embedded model: one worker process, requests, crashes as typed errors.

Why a thread per pipe and not asyncio subprocesses: the model is called from more than one event
loop over a process's life (the TUI's loop, `asyncio.run` in `myrm run`, background summaries),
and a worker owned by one loop would die with it. Plain threads read the pipes and hand each line
to whichever loop asked, with `call_soon_threadsafe`.

What a crash looks like from here: the worker's stdout reaches EOF, `wait()` gives its signal or
exit code, every request in flight gets a `LocalModelCrashedError`, and the worker is forgotten
so the next request starts a fresh one. The session is untouched: the agent stores nothing for
a call that failed before its answer finished.

Who owns the workers: a `LocalWorkers` pool, created by whoever holds the model calls (the app,
`myrm run`, an ACP server, `myrm doctor`'s check) and closed by it when it ends, which stops the
worker processes. It is handed down as a parameter (llm.stream's `StreamWithLocalWorkers`), never
found through a module global: the weights load once per worker, and the pool's owner says how
long the worker lives.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Self

from myrm_tui.llm.errors import LocalModelCrashedError, ProviderError
from myrm_tui.log_files import append_log

_log = logging.getLogger(__name__)

# Loading the 135M model takes ~0.1 s; 60 s covers a cold disk on a loaded machine, and a worker
# that has not answered by then is stuck, not slow.
LOAD_TIMEOUT_S = 60.0
# After a cancel, the worker stops at its next token (milliseconds). One that has not confirmed
# within this long is wedged in native code: it is killed so the next message gets a fresh one.
CANCEL_GRACE_S = 5.0
# Lines of the worker's stderr kept for the crash report and `myrm doctor`.
STDERR_TAIL_LINES = 40
# The worker's stderr (native stack of a crash) is appended here when it dies unexpectedly.
LOG_NAME = "local-model.log"
# A closed worker gets this long to exit on its own (stdin EOF) before it is killed.
CLOSE_GRACE_S = 2.0


@dataclass(frozen=True)
class WorkerKey:
    model_path: str
    n_ctx: int
    threads: int


def describe_exit(returncode: int | None) -> str:
    """ "signal 11, SIGSEGV" / "exit code 3": how the worker ended, in the user's words."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown signal"
        return f"signal {number}, {name}"
    return f"exit code {returncode}"


def crash_error(model: str, returncode: int | None, stderr_tail: str = "") -> LocalModelCrashedError:
    how = describe_exit(returncode)
    oom = " (the system may have run out of memory)" if returncode == -signal.SIGKILL else ""
    message = f"The local model {model} crashed ({how}){oom}; your session is kept."
    hint = (
        "Send the message again to restart it. If it keeps crashing, run `myrm doctor` (it tests the "
        "model on this CPU) or switch model (Ctrl+O, or --model)."
    )
    error = LocalModelCrashedError(message, hint)
    error.returncode = returncode
    error.stderr_tail = stderr_tail
    return error


class LocalWorker:
    """One running worker process and the requests routed to it."""

    def __init__(self, key: WorkerKey, model: str, on_exit: Callable[[LocalWorker], None]) -> None:
        self.key = key
        self.model = model
        # The pool's hook: a worker that died or was killed is no longer served to a request.
        self._on_exit = on_exit
        command = [
            sys.executable,
            "-m",
            "myrm_tui.llm.local.worker",
            "--model",
            key.model_path,
            "--n-ctx",
            str(key.n_ctx),
            "--threads",
            str(key.threads),
        ]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            close_fds=True,
        )
        self.ready = threading.Event()
        # Set by the stdout reader once it has reaped the process. `close` waits on this rather
        # than `Popen.wait(timeout)`: while the reader holds the reap, that call polls with sleeps
        # growing to 50 ms, and a worker that exits 35 ms after its stdin closes was seen ~60 ms on.
        self.exited = threading.Event()
        self.ready_info: dict[str, Any] = {}
        self.dead: LocalModelCrashedError | None = None
        # The worker's last `done` line (reason, evaluated tokens): how a cancelled request ended.
        self.last_done: dict[str, Any] = {}
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._routes: dict[int, Callable[[dict[str, Any]], None]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closing = False
        threading.Thread(target=self._read_stdout, name="myrm-local-out", daemon=True).start()
        threading.Thread(
            target=self._read_stderr, args=(self.process.stderr,), name="myrm-local-err", daemon=True
        ).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr_tail(self) -> str:
        return "".join(self._stderr)

    # -- pipes
    def _read_stderr(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        for line in stream:
            self._stderr.append(line)

    def _read_stdout(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        for line in stream:
            try:
                message = json.loads(line)
            except ValueError:
                self._stderr.append(f"(not protocol) {line}")
                continue
            op = message.get("op")
            if op in ("ready", "fatal"):
                self.ready_info = message
                self.ready.set()
            else:
                if op == "done":
                    self.last_done = message
                with self._lock:
                    route = self._routes.get(message.get("id"))
                if route is not None:
                    route(message)
        returncode = self.process.wait()
        self.exited.set()
        fatal = self.ready_info.get("error") if self.ready_info.get("op") == "fatal" else None
        if fatal:
            error: LocalModelCrashedError = LocalModelCrashedError(
                f"The local model {self.model} could not load: {fatal}.",
                "Reinstall the local extra (pip install 'myrm-tui[local]') or pick another model.",
            )
            error.returncode = returncode
            error.stderr_tail = self.stderr_tail()
        else:
            error = crash_error(self.model, returncode, self.stderr_tail())
        if not self._closing:
            log = append_log(
                LOG_NAME,
                f"local model worker {self.pid} ({self.model}) ended: "
                f"{describe_exit(returncode)}\n{self.stderr_tail()}",
            )
            if log is not None:
                error.hint += f" Details: {log}"
        with self._lock:
            self.dead = error
            routes = list(self._routes.values())
            self._routes.clear()
        self.ready.set()
        for route in routes:
            route({"op": "crashed"})
        self._on_exit(self)

    def _write(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None:
            raise BrokenPipeError("worker has no stdin")
        with self._write_lock:
            stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            stdin.flush()

    # -- requests
    def submit(
        self, rid: int, messages: list[dict[str, Any]], params: dict[str, Any], route: Callable[[dict[str, Any]], None]
    ) -> None:
        with self._lock:
            if self.dead is not None:
                raise self.dead
            self._routes[rid] = route
        try:
            self._write({"op": "generate", "id": rid, "messages": messages, "params": params})
        except (BrokenPipeError, OSError, ValueError):
            # The reader thread will report how it died; make sure this request hears it.
            self.process.wait()
            self.ready.wait(CLOSE_GRACE_S)

    def cancel(self, rid: int) -> None:
        """Ask the worker to stop `rid`; kill it if it does not confirm within CANCEL_GRACE_S."""
        with self._lock:
            still_routed = rid in self._routes
        if not still_routed or self.dead is not None:
            return
        confirmed = threading.Event()
        with self._lock:
            self._routes[rid] = lambda message: (
                confirmed.set() if message.get("op") in ("done", "error", "crashed") else None
            )
        try:
            self._write({"op": "cancel", "id": rid})
        except (BrokenPipeError, OSError, ValueError):
            return

        def watchdog() -> None:
            if not confirmed.wait(CANCEL_GRACE_S) and self.dead is None:
                _log.debug("local model worker %s ignored a cancel; killing it", self.pid)
                self.kill()
            with self._lock:
                self._routes.pop(rid, None)

        threading.Thread(target=watchdog, name="myrm-local-cancel", daemon=True).start()

    def forget_route(self, rid: int) -> None:
        with self._lock:
            self._routes.pop(rid, None)

    def kill(self) -> None:
        # Retire it before the signal lands: the reader thread notices the death a moment later,
        # and a request made in between must start a fresh worker, not inherit this one's end.
        self._on_exit(self)
        with contextlib.suppress(OSError):
            self.process.kill()

    def close(self) -> None:
        """Stop the worker: stdin EOF lets it exit cleanly; kill it if it does not. A worker still
        loading reads stdin only once loaded and holds nothing worth waiting for: it is killed at
        once (a `myrm run` that stops on a usage error must not wait for the weights it started)."""
        self._closing = True
        if not self.ready.is_set():
            self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(CLOSE_GRACE_S)
            return
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        if not self.exited.wait(CLOSE_GRACE_S):
            self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(CLOSE_GRACE_S)


class LocalWorkers:
    """The worker processes of one owner, one model in memory at a time.

    Why a pool object and not a module global: a process may hold more than one owner over its
    life (tests, an ACP server beside a run), and each must know that `close()` stopped what it
    started; a global outlived its user and was stopped only by `atexit`."""

    def __init__(self) -> None:
        self._workers: dict[WorkerKey, LocalWorker] = {}
        self._lock = threading.Lock()
        self._request_ids = itertools.count(1)
        self._closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _forget(self, worker: LocalWorker) -> None:
        with self._lock:
            if self._workers.get(worker.key) is worker:
                del self._workers[worker.key]

    def get(self, key: WorkerKey, model: str) -> LocalWorker:
        """The live worker for `key`, started on first use; workers for other keys are stopped
        (one model in memory at a time: a settings change replaces it). Starting is all this
        waits for, so an owner may call it early (`myrm run` does, before the store opens) and
        let the model load while it does other work."""
        stale: list[LocalWorker] = []
        with self._lock:
            if self._closed:
                raise ProviderError(f"The local model {model} was asked for after its owner closed it.")
            worker = self._workers.get(key)
            if worker is None or worker.dead is not None or worker.process.poll() is not None:
                stale = [w for k, w in self._workers.items() if k != key]
                for other in stale:
                    del self._workers[other.key]
                worker = self._workers[key] = LocalWorker(key, model, self._forget)
        for other in stale:
            threading.Thread(target=other.close, daemon=True).start()
        return worker

    def running(self) -> list[LocalWorker]:
        with self._lock:
            return list(self._workers.values())

    def close(self) -> None:
        """Stop every worker (stdin EOF, a kill after CLOSE_GRACE_S); later requests are refused."""
        with self._lock:
            self._closed = True
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            worker.close()

    async def generate(
        self, key: WorkerKey, model: str, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        """Protocol messages (`chunk`…, then `done`) for one request; raises on a crash or error."""
        import asyncio  # here, not at the top: `myrm run` starts a worker before asyncio is loaded (entry.py)

        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def route(message: dict[str, Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens any more
                loop.call_soon_threadsafe(inbox.put_nowait, message)

        worker = self.get(key, model)
        rid = next(self._request_ids)
        worker.submit(rid, messages, params, route)
        finished = False
        try:
            if not worker.ready.is_set():
                ready = await asyncio.to_thread(worker.ready.wait, LOAD_TIMEOUT_S)
                if not ready:
                    worker.kill()
                    raise LocalModelCrashedError(
                        f"The local model {model} did not load within {LOAD_TIMEOUT_S:.0f} s.",
                        "Check free memory and CPU load, then send again; `myrm doctor` tests the model.",
                    )
            while True:
                message = await inbox.get()
                op = message.get("op")
                if op == "chunk":
                    yield message
                elif op == "done":
                    finished = True
                    yield message
                    return
                elif op == "error":
                    finished = True
                    raise ProviderError(f"The local model {model} failed: {message.get('error')}")
                elif op == "crashed":
                    finished = True
                    dead = worker.dead or crash_error(model, worker.process.poll())
                    raise dead
        finally:
            if not finished:
                worker.cancel(rid)
            else:
                worker.forget_route(rid)


def default_threads(setting: int | None) -> int:
    """0 / None: let the worker use every core."""
    return int(setting) if setting else 0


def key_for(path: Path, n_ctx: int, threads: int | None) -> WorkerKey:
    return WorkerKey(model_path=str(path), n_ctx=n_ctx, threads=default_threads(threads))
