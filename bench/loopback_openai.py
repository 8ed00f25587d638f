"""An OpenAI-compatible chat server on 127.0.0.1 that answers every request at once with one
short streamed answer: the far end of `myrm run` for the latency bench (bench/latency.py).

Why not tests/faults/fake_openai_server.py: the bench must not import the test tree, and it needs
none of that server's fault shapes; the wire format is the same (SSE `data:` chunks, usage, then
`[DONE]`). Standard library only, so the server costs the measured process nothing to import and
answers in well under a millisecond.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = "Hello."


def _event(choices: list[dict], usage: dict | None = None) -> str:
    payload: dict = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "bench"}
    payload["choices"] = choices
    if usage is not None:
        payload["usage"] = usage
    return f"data: {json.dumps(payload)}\n\n"


def sse_body(text: str = ANSWER) -> bytes:
    """The whole streamed answer: role, text, finish, usage, [DONE]."""
    events = [
        _event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]),
        _event([{"index": 0, "delta": {"content": text}, "finish_reason": None}]),
        _event([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        _event([], usage={"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}),
        "data: [DONE]\n\n",
    ]
    return "".join(events).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = sse_body()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.requests += 1  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        """Silent: the bench prints its own table."""


@contextmanager
def loopback_server() -> Iterator[str]:
    """Serve in a thread for the `with` block; yields the api_base (`http://127.0.0.1:PORT/v1`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.requests = 0  # type: ignore[attr-defined]
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="loopback-openai", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
