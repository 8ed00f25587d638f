"""The SDK transport for one server entry: a child process over stdio, or streamable HTTP.

Why a wrapper around the SDK's transports: two things the SDK leaves to the caller. The server's
stderr must go to a log file (never the terminal the TUI draws on, never `myrm run`'s stderr), and
the connection must say when it ends by itself (a crashed server), so the manager can mark it and
tell the model the truth instead of letting the next call wait for an answer that never comes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Self, TextIO, cast

from myrm_tui.settings.sections.mcp_servers import STDIO, McpServerConfig

# Largest single server-sent event accepted from an HTTP server. The SDK's default (1 MiB) is
# smaller than one 1 MB tool result in its JSON envelope; the engine spills big outputs to the
# vault anyway, so the bound only guards memory against a server that never ends an event.
MAX_HTTP_EVENT_BYTES = 64 * 1024 * 1024
# HTTP timeouts: connecting should be quick on any network a tool server is on; reads may wait
# as long as a tool call may run (the call's own timeout ends it sooner).
HTTP_CONNECT_TIMEOUT_S = 10.0


class _WatchedReadStream:
    """The SDK's read stream, plus a callback when it ends (EOF or closed): for a stdio server
    that means the process exited or closed its stdout."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        # cast: the SDK's stream is held as Any; an async context manager's exit returns bool | None.
        return cast(bool | None, await self._inner.__aexit__(*exc))

    def __getattr__(self, name: str) -> Any:  # e.g. `last_context`, read by the dispatcher
        return getattr(self._inner, name)


@asynccontextmanager
async def open_transport(
    config: McpServerConfig, *, workspace: Path, errlog: TextIO, on_end: Callable[[], None], read_timeout_s: float
) -> AsyncIterator[Any]:
    """Yield the (read, write) streams of a connection to `config` (already `${VAR}`-expanded).
    Leaving the context closes it: stdin is closed, then the process tree is terminated (SDK).

    A stdio server's environment is the SDK's short safe list (HOME, PATH, SHELL, TERM, USER,
    LOGNAME) plus the entry's own `env`: myrm's environment, with the user's provider keys, is not
    inherited; a server that needs a key names it (`env = {TOKEN = "${TOKEN}"}`)."""
    if config.transport == STDIO:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        cwd = Path(os.path.expanduser(config.cwd)) if config.cwd else workspace
        if not cwd.is_absolute():
            cwd = workspace / cwd
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env), cwd=str(cwd)
        )
        async with stdio_client(params, errlog=errlog) as (read, write):
            yield _WatchedReadStream(read, on_end), write
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(HTTP_CONNECT_TIMEOUT_S, read=read_timeout_s)
    async with (
        httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http,
        streamable_http_client(config.url, http_client=http, max_sse_event_size=MAX_HTTP_EVENT_BYTES) as (read, write),
    ):
        yield _WatchedReadStream(read, on_end), write
