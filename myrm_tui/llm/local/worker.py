"""The embedded model's own process: llama.cpp runs here, never in the app.

Why a child process: llama.cpp is native code. A fault inside it (a CPU-specific kernel bug, an
out-of-memory kill) must cost the user one answer, not the TUI, the terminal or `myrm run`. The
parent (`client.py`) sees this process die, turns that into a typed error, and starts a new
one for the next message.

Why one long-lived worker: llama.cpp keeps the KV cache of the previous prompt in the `Llama`
instance, so the next turn, whose prompt starts with the same bytes (the engine keeps prompts
append-mostly), only evaluates the new suffix. The worker keeps that instance between requests.

Protocol: JSON lines. Requests on stdin: `{"op": "generate", "id", "messages", "params"}` and
`{"op": "cancel", "id"}`. Replies on the protocol stream: `{"op": "ready"}` once loaded, then per
request `{"op": "chunk", "id", "text"}`… and one `{"op": "done", "id", "reason", "usage"}` or
`{"op": "error", "id", "error"}`; `{"op": "fatal"}` if the model cannot load. Native code may
print to fd 1, so the protocol uses a private duplicate of it and fd 1 is pointed at stderr.
EOF on stdin (the parent exited or closed us) ends the process.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

# Sampling defaults for a 135M model: it loops ("la femme, la femme, …") at llama.cpp's default
# temperature (0.8) with no repeat penalty; these keep short answers on topic.
DEFAULT_TEMPERATURE = 0.2
DEFAULT_REPEAT_PENALTY = 1.15
# Without an explicit max_tokens a small model can ramble until the window is full.
DEFAULT_MAX_TOKENS = 512


class _Sender:
    """Writes protocol lines; one lock so the reader thread's acks never interleave a chunk."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


def _protocol_stream() -> TextIO:
    """A private copy of stdout for the protocol; fd 1 then points at stderr for native prints."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(protocol_fd, "w", encoding="utf-8", buffering=1)


def _generate(llama: Any, request: dict[str, Any], cancel: threading.Event) -> Iterator[dict[str, Any]]:
    """Chunks for one request, then its `done` line; stops at the next token once cancelled."""
    params = request.get("params") or {}
    kwargs: dict[str, Any] = {
        "max_tokens": int(params.get("max_tokens") or DEFAULT_MAX_TOKENS),
        "temperature": DEFAULT_TEMPERATURE,
        "repeat_penalty": DEFAULT_REPEAT_PENALTY,
    }
    if params.get("temperature") is not None:
        kwargs["temperature"] = float(params["temperature"])
    if params.get("seed") is not None:
        kwargs["seed"] = int(params["seed"])
    rid = request["id"]
    chunks = llama.create_chat_completion(messages=request["messages"], stream=True, **kwargs)
    text: list[str] = []
    reason = "stop"
    try:
        for chunk in chunks:
            if cancel.is_set():
                reason = "cancelled"
                break
            choice = chunk["choices"][0]
            piece = choice.get("delta", {}).get("content") or ""
            if piece:
                text.append(piece)
                yield {"op": "chunk", "id": rid, "text": piece}
            if choice.get("finish_reason"):
                reason = choice["finish_reason"]
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    # Streaming llama.cpp reports no usage; the context length after generation is prompt +
    # evaluated completion tokens (a token that hit max_tokens is sampled, not evaluated).
    completion = len(llama.tokenize("".join(text).encode("utf-8"), add_bos=False, special=False))
    evaluated = int(llama.n_tokens)
    prompt = max(evaluated - completion + (1 if reason == "length" else 0), 0)
    yield {
        "op": "done",
        "id": rid,
        "reason": reason,
        "evaluated_tokens": evaluated,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


class _Requests:
    """stdin reader: queues generate requests, flags cancels at once (even mid-generation)."""

    def __init__(self) -> None:
        self.pending: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._current: int | None = None
        self._cancel = threading.Event()
        self._cancelled: set[int] = set()

    def read_forever(self, stream: TextIO) -> None:
        for line in stream:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            op = message.get("op")
            if op == "generate":
                self.pending.put(message)
            elif op == "cancel":
                with self._lock:
                    if message.get("id") == self._current:
                        self._cancel.set()
                    else:
                        self._cancelled.add(message.get("id"))
        # The parent is gone (or closed us): stop whatever runs; the main loop exits.
        self._cancel.set()
        self.pending.put(None)

    def start(self, request: dict[str, Any]) -> threading.Event | None:
        """Mark `request` current; None when it was cancelled before it started."""
        with self._lock:
            if request["id"] in self._cancelled:
                self._cancelled.discard(request["id"])
                return None
            self._current = request["id"]
            self._cancel = threading.Event()
            return self._cancel

    def finish(self) -> None:
        with self._lock:
            self._current = None


def _load(args: argparse.Namespace) -> Any:
    from myrm_tui.llm.local.llama_safety import disable_extra_buffer_types

    disable_extra_buffer_types()
    from llama_cpp import Llama

    return Llama(model_path=args.model, n_ctx=args.n_ctx, n_threads=args.threads or os.cpu_count() or 1, verbose=False)


def serve(args: argparse.Namespace, send: _Sender, requests_in: TextIO) -> int:
    started = time.perf_counter()
    try:
        llama = _load(args)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which names it to the user
        send({"op": "fatal", "error": f"{type(exc).__name__}: {exc}"})
        return 1
    send({"op": "ready", "pid": os.getpid(), "load_ms": round((time.perf_counter() - started) * 1000, 1)})
    requests = _Requests()
    threading.Thread(target=requests.read_forever, args=(requests_in,), name="requests", daemon=True).start()
    while True:
        request = requests.pending.get()
        if request is None:
            return 0
        cancel = requests.start(request)
        if cancel is None:
            send({"op": "done", "id": request["id"], "reason": "cancelled", "usage": None})
            continue
        try:
            for line in _generate(llama, request, cancel):
                send(line)
        except Exception as exc:  # noqa: BLE001 - one failed request must not end the worker
            send({"op": "error", "id": request["id"], "error": f"{type(exc).__name__}: {exc}"})
        finally:
            requests.finish()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m myrm_tui.llm.local.worker")
    parser.add_argument("--model", required=True)
    parser.add_argument("--n-ctx", type=int, required=True)
    parser.add_argument("--threads", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # Ctrl+C in the terminal reaches the whole process group; cancelling is the parent's job.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    send = _Sender(_protocol_stream())
    # A native crash prints the Python stack to stderr, which the parent keeps for the log.
    faulthandler.enable(file=sys.stderr)
    return serve(args, send, sys.stdin)


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown. Why: the worker keeps nothing (every
    protocol line is flushed as it is sent), and freeing the weights, the llama.cpp context and
    every module took 90-120 ms on two cores, which `myrm run` waited for at its close
    (`LocalWorker.close`) after the answer was already printed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # the parent closed its end: nothing left to tell
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
