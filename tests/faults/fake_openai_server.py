"""A self-contained OpenAI-compatible chat server on 127.0.0.1 that misbehaves on request.

Why not the llama.cpp server behind a proxy: each fault class here is a *shape of response*
(malformed SSE data, a 200 with an HTML body, a 401 from a proxy, a stream that trickles),
and canned bytes reproduce it exactly, in milliseconds, with no model to load. The client side
(litellm → openai SDK → httpx) is the real one; only the far end is scripted, like a
misconfigured or failing server would be.

The server runs on its own event loop in a thread, so a test's loop can block on the client
while the server keeps serving (and a test that times out a call does not stall the server).
A uniquely named module rather than a conftest: other folders' conftests share that name.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

FAKE_MODEL = "openai/fake-model"


@dataclass(frozen=True)
class Reply:
    """One canned answer. `kind`: "sse" streams `events` (each a `data:` payload) with `gap_s`
    seconds between them after `first_delay_s`; "body" sends `body` whole with `status` and
    `content_type`; "hang" accepts the request and never answers."""

    kind: str = "sse"
    events: tuple[str, ...] = ()
    gap_s: float = 0.0
    first_delay_s: float = 0.0
    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()


def _chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> str:
    payload: dict = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        payload["usage"] = usage
    return json.dumps(payload)


def answer(*pieces: str, gap_s: float = 0.0, first_delay_s: float = 0.0) -> Reply:
    """A well-formed streamed answer made of `pieces`, ending with usage and [DONE]."""
    events = [_chunk({"role": "assistant", "content": ""})]
    events += [_chunk({"content": p}) for p in pieces]
    events.append(_chunk({}, finish="stop"))
    events.append(
        json.dumps(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "fake-model",
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": len(pieces), "total_tokens": 5},
            }
        )
    )
    events.append("[DONE]")
    return Reply(events=tuple(events), gap_s=gap_s, first_delay_s=first_delay_s)


def malformed_stream() -> Reply:
    """A 200 event stream whose data lines are not JSON (a buggy or truncating gateway)."""
    return Reply(
        events=(
            _chunk({"role": "assistant", "content": ""}),
            '{"id": "chatcmpl-fake", "choices": [{"delt',
            "this is not json at all",
            "[DONE]",
        )
    )


def html_200() -> Reply:
    """A 200 whose body is an HTML page, not JSON or SSE (a captive portal, a proxy login page)."""
    return Reply(
        kind="body",
        status=200,
        content_type="text/html",
        body=b"<!doctype html><html><head><title>Sign in</title></head>"
        b"<body><form action=/login>Proxy login required</form></body></html>",
    )


def error(
    status: int,
    message: str,
    *,
    type_: str = "error",
    code: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> Reply:
    body = {"error": {"message": message, "type": type_, "code": code}}
    return Reply(kind="body", status=status, body=json.dumps(body).encode(), headers=headers)


def hang() -> Reply:
    return Reply(kind="hang")


@dataclass
class FakeOpenAI:
    """Serves `plan` in order (one reply per request), then `default`. Records what it saw."""

    port: int
    plan: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=lambda: answer("ok"))
    requests: list[dict] = field(default_factory=list)
    # Set on the server's loop when the fixture ends, so hanging and trickling replies stop.
    closing: asyncio.Event | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def api_base_with(self, userinfo: str = "", query: str = "") -> str:
        at = f"{userinfo}@" if userinfo else ""
        return f"http://{at}127.0.0.1:{self.port}/v1" + (f"?{query}" if query else "")

    async def handle(self, request):  # aiohttp handler
        from aiohttp import web

        body = await request.read()
        self.requests.append(
            {
                "path": request.path,
                "query": request.query_string,
                "authorization": request.headers.get("Authorization", ""),
                "body": body.decode("utf-8", "replace"),
            }
        )
        reply = self.plan.pop(0) if self.plan else self.default
        record = self.requests[-1]
        record["events_sent"] = 0
        if reply.kind == "hang":
            await self._pause(3600)
            return web.Response(status=503)  # only reached when the server is closing
        if reply.kind == "body":
            return web.Response(
                status=reply.status, body=reply.body, content_type=reply.content_type, headers=dict(reply.headers)
            )
        response = web.StreamResponse(
            status=reply.status, headers={"Content-Type": "text/event-stream", **dict(reply.headers)}
        )
        try:
            await response.prepare(request)
        except ConnectionResetError:
            record["client_left"] = True
            return response
        if reply.first_delay_s:
            await self._pause(reply.first_delay_s)
        for i, data in enumerate(reply.events):
            if i and reply.gap_s:
                await self._pause(reply.gap_s)
            if self.closing is not None and self.closing.is_set():
                return response
            if request.transport is None or request.transport.is_closing():
                record["client_left"] = True  # the client gave up (a deadline): stop sending
                return response
            try:
                await response.write(f"data: {data}\n\n".encode())
            except (ConnectionResetError, RuntimeError):
                record["client_left"] = True
                return response
            record["events_sent"] += 1
        await response.write_eof()
        return response

    async def _pause(self, seconds: float) -> None:
        """Sleep, cut short when the server is closing."""
        if self.closing is None:
            await asyncio.sleep(seconds)
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(self.closing.wait(), seconds)


@contextmanager
def running_fake_openai() -> Iterator[FakeOpenAI]:
    """A FakeOpenAI on its own event loop in a thread, for the `with` block (test modules wrap
    it in a fixture)."""
    from aiohttp import web

    server = FakeOpenAI(port=0)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, web.AppRunner] = {}

    async def start() -> None:
        server.closing = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", server.handle)
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()  # the OS picks a free port: no race
        server.port = runner.addresses[0][1]
        holder["runner"] = runner

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="fake-openai", daemon=True)
    thread.start()
    assert started.wait(10), "fake OpenAI server did not start"
    try:
        yield server
    finally:
        assert server.closing is not None, "set when the server started"
        loop.call_soon_threadsafe(server.closing.set)
        asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


# The two client paths a call to `openai/NAME` at an api_base (or to the embedded `local/NAME`) can
# take (issue 27): myrm's own client (the default) and litellm's (every other provider's path).
# Tests that describe the wire behaviour run on both, so the two cannot drift apart.
WIRES = ("direct", "litellm")


def use_wire(wire: str, monkeypatch) -> None:
    """Send `openai/NAME` calls at an api_base and `local/NAME` calls through `wire` for the rest
    of the test."""
    from myrm_tui.llm import openai_compatible
    from myrm_tui.llm.local import provider as local_provider

    if wire == "litellm":
        monkeypatch.setattr(openai_compatible, "serves", lambda model, api_base: False)
        monkeypatch.setattr(local_provider, "serves", lambda model: False)
