"""Fixtures for the LLM layer: the real llama.cpp server, a fault-injecting HTTP proxy in front
of it, fast retry backoff, and scripted-provider script files.

The llama.cpp server fixture is session-scoped (model load + uvicorn start is ~3 s); if other
test areas need it, it can move to tests/conftest.py unchanged.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import myrm_tui  # noqa: F401  (offline env before anything imports litellm)
from myrm_tui.llm import retry_policy
from tests.llm.llm_test_support import DUMMY_API_KEY, free_port

# The loopback OpenAI-compatible server of the fault tests (tests/faults/fake_openai_server.py):
# request bodies and headers captured at a real HTTP server, shared with this folder's tests.


@dataclass
class FaultProxy:
    """HTTP proxy in front of the llama server. Each request consumes the next action of `plan`
    (default: forward). Actions: forward, 429, 401, 404, 400ctx, 500, drop."""

    upstream: str
    port: int = 0
    plan: list[str] = field(default_factory=list)
    default: str = "forward"
    requests: int = 0
    # SSE data events passed through before "drop" kills the connection.
    drop_after_events: int = 4

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def handle(self, request):  # aiohttp handler
        from aiohttp import ClientSession, web

        self.requests += 1
        body = await request.read()
        action = self.plan.pop(0) if self.plan else self.default
        canned = {
            "429": (
                429,
                {"message": "Rate limit reached for requests", "type": "rate_limit_error"},
                {"Retry-After": "0"},
            ),
            "401": (
                401,
                {
                    "message": f"Incorrect API key provided: {DUMMY_API_KEY}.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                },
                {},
            ),
            "404": (
                404,
                {
                    "message": "The model `no-such-model` does not exist or you do not have access to it.",
                    "type": "invalid_request_error",
                    "code": "model_not_found",
                },
                {},
            ),
            "400ctx": (
                400,
                {
                    "message": "This model's maximum context length is 4096 tokens. However, you "
                    "requested 5031 tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                },
                {},
            ),
            "500": (500, {"message": "internal error", "type": "server_error"}, {}),
        }
        if action in canned:
            status, error, headers = canned[action]
            return web.json_response({"error": error}, status=status, headers=headers)
        async with (
            ClientSession() as session,
            session.post(
                self.upstream + request.path.removeprefix("/v1"),
                data=body,
                headers={"Content-Type": "application/json"},
            ) as upstream,
        ):
            response = web.StreamResponse(
                status=upstream.status, headers={"Content-Type": upstream.headers.get("Content-Type", "")}
            )
            await response.prepare(request)
            events = 0
            async for line in upstream.content:
                await response.write(line)
                if action == "drop" and line.startswith(b"data:"):
                    events += 1
                    if events >= self.drop_after_events:
                        # Kill the socket mid-body: the client sees a truncated chunked stream.
                        request.transport.abort()
                        return response
            await response.write_eof()
            return response


@pytest.fixture
def fault_proxy(llama_server) -> Iterator[FaultProxy]:
    """A FaultProxy running on its own event loop in a thread (independent of the test's loop)."""
    from aiohttp import web

    proxy = FaultProxy(upstream=llama_server.api_base, port=free_port())
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, web.AppRunner] = {}

    async def start() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", proxy.handle)
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", proxy.port).start()
        holder["runner"] = runner

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
    thread.start()
    assert started.wait(10), "fault proxy did not start"
    try:
        yield proxy
    finally:
        asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries wait milliseconds instead of seconds."""
    monkeypatch.setattr(retry_policy, "BACKOFF_BASE_S", 0.001)
    monkeypatch.setattr(retry_policy, "BACKOFF_CAP_S", 0.005)


@pytest.fixture
def write_script(tmp_path: Path) -> Callable[..., str]:
    """write_script(turns, **top) -> the model name `scripted/<abs path>`."""
    counter = {"n": 0}

    def write(turns: list[dict], **top: object) -> str:
        counter["n"] += 1
        path = tmp_path / f"script{counter['n']}.json"
        path.write_text(json.dumps({"turns": turns, **top}), encoding="utf-8")
        return f"scripted/{path}"

    return write


@pytest.fixture
def collect() -> Callable[..., object]:
    """await collect(model, messages, tools=None, **CallSettings fields) -> list of events."""
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.stream import stream

    async def run(model: str, messages: list[dict], tools: list[dict] | None = None, **fields: Any) -> list:
        return [event async for event in stream(model, messages, tools, CallSettings(**fields))]

    return run
