"""One MCP server, running: start with a deadline, list its tools, answer calls, notice its end.

Why one long-lived task per server: the SDK's client is a stack of anyio task groups that must be
entered and left by the same task. The runner task owns them for the server's whole life; tool
calls come from the agent's tasks and only send requests through the open session (which the SDK
allows from any task on the loop). The runner ends on stop(), on a start that fails or passes its
deadline, or when the connection ends by itself (the process died): each leaves a state and a
one-sentence reason that the /mcp screen, doctor and the model's error results quote.
"""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from myrm_tui.mcp import server_log
from myrm_tui.mcp.expand import MissingVariable, expanded
from myrm_tui.settings.sections.mcp_servers import STDIO, McpServerConfig
from myrm_tui.sinks import LOG, scrub

STARTING = "starting"
READY = "ready"
FAILED = "failed"  # did not start (bad command, missing variable, deadline, handshake error)
CRASHED = "crashed"  # was ready, then the connection ended without us asking
STOPPED = "stopped"
DISABLED = "disabled"  # `enabled = false` in its entry

# Pages of tools/list followed; a server whose pagination never ends cannot hang a start.
MAX_TOOL_PAGES = 50
# Characters of a server's last stderr line quoted in a status: a traceback's last line fits, a
# server that prints a whole JSON dump on one line does not flood doctor or the tool result.
STDERR_HINT_CHARS = 300
# After stop() asks the runner to finish, how long to wait for the SDK's own shutdown (close
# stdin, 2 s grace, SIGTERM to the process group, 2 s, SIGKILL) before cancelling the runner.
STOP_WAIT_S = 6.0


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it (names are the server's own)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only: bool  # the server's readOnlyHint (a hint: only honoured if the user allows it)


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot for the /mcp screen and doctor."""

    name: str
    transport: str
    scope: str
    source: str
    summary: str
    state: str
    tools: tuple[str, ...]
    last_error: str
    start_seconds: float | None
    log_path: Path | None
    server_info: str = ""


class McpCallError(Exception):
    """A call that could not be done; the message is one sentence for the model (and the user)."""


def describe(exc: BaseException) -> str:
    """One readable sentence from an SDK or OS failure (the SDK raises exception groups from its
    task groups; the first real cause is what the user needs)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}"
    text = str(exc).strip() or type(exc).__name__
    name = type(exc).__name__
    return text if name in text or name in ("McpCallError", "MCPError", "RuntimeError") else f"{name}: {text}"


class ServerConnection:
    def __init__(
        self,
        config: McpServerConfig,
        *,
        workspace: Path,
        startup_timeout: float,
        tool_timeout: float,
        env: Mapping[str, str] | None = None,
        on_change: Callable[[ServerConnection], None] | None = None,
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.startup_timeout = config.startup_timeout or startup_timeout
        self.tool_timeout = config.tool_timeout or tool_timeout
        self._env = env
        self._on_change = on_change
        self.state = STOPPED if config.enabled else DISABLED
        self.last_error = ""
        self.start_seconds: float | None = None
        self.tools: tuple[RemoteTool, ...] = ()
        self.has_resources = False
        self.server_info = ""
        self.log_path: Path | None = None
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()  # set when a start ends (ready or not)
        self._stop = asyncio.Event()
        self._ended = asyncio.Event()  # the connection ended by itself
        self._relist = asyncio.Event()

    @property
    def name(self) -> str:
        return self.config.name

    def status(self) -> ServerStatus:
        return ServerStatus(
            self.name,
            self.config.transport,
            self.config.scope,
            self.config.source,
            self.config.summary(),
            self.state,
            tuple(t.name for t in self.tools),
            self.last_error,
            self.start_seconds,
            self.log_path,
            self.server_info,
        )

    # lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start in the background (returns at once); `wait_started()` waits for the outcome."""
        if not self.config.enabled or (self._task is not None and not self._task.done()):
            return
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._ended = asyncio.Event()
        self._set(STARTING, "")
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")

    async def wait_started(self) -> None:
        if self.state == STARTING:
            await self._settled.wait()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None or task.done():
            if self.state in (STARTING, READY):
                self._set(STOPPED, "")
            return
        if self.state == STARTING:
            task.cancel()  # quitting must not wait out a start deadline; the SDK's cleanup is shielded
        else:
            self._stop.set()
        done, _ = await asyncio.wait({task}, timeout=STOP_WAIT_S)
        if not done:  # the SDK's shutdown is bounded; this is the belt on top of its braces
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_WAIT_S)
        self._set(STOPPED, self.last_error if self.state in (FAILED, CRASHED) else "")

    async def restart(self) -> None:
        await self.stop()
        self.start()
        await self.wait_started()

    def _set(self, state: str, error: str) -> None:
        self.state, self.last_error = state, error
        if state != STARTING:
            self._settled.set()
        if self._on_change is not None:
            self._on_change(self)

    # the runner ---------------------------------------------------------------------------

    async def _run(self) -> None:
        began = time.monotonic()
        try:
            config = expanded(self.config, os.environ if self._env is None else self._env)
        except MissingVariable as exc:
            self._set(FAILED, str(exc))
            return
        if config.transport == STDIO:
            errlog, self.log_path = server_log.open_log(self.name)
        else:  # a remote server's stderr is on its own machine
            errlog, self.log_path = io.StringIO(), None  # never written: the transport has no child
        try:
            await self._connect_and_serve(config, began, errlog)
        except asyncio.CancelledError:
            self._client = None
            self._set(STOPPED, "")
            raise
        except TimeoutError:
            self._set(FAILED, f"did not start within {self.startup_timeout:g} s{self._stderr_hint()}")
        except _Ended:
            if self.state != CRASHED:  # a failed call may have said it first, with more detail
                self._set(CRASHED, f"the server stopped answering (its connection closed){self._stderr_hint()}")
        except Exception as exc:  # noqa: BLE001 - every failure becomes a state and a sentence
            if self.state != CRASHED:
                state = CRASHED if self.state == READY else FAILED
                self._set(state, f"{describe(exc)}{self._stderr_hint()}")
        else:
            self._set(STOPPED, "")
        finally:
            self._client = None
            errlog.close()

    async def _connect_and_serve(self, config: McpServerConfig, began: float, errlog: Any) -> None:
        from contextlib import AsyncExitStack

        from mcp import Client
        from mcp.types import Implementation

        from myrm_tui.mcp.transport import open_transport

        transport = open_transport(
            config,
            workspace=self.workspace,
            errlog=errlog,
            on_end=self._ended.set,
            read_timeout_s=self.tool_timeout + self.startup_timeout,
        )
        client = Client(
            transport,
            cache=None,
            message_handler=self._on_message,
            client_info=Implementation(name="myrm", version=_version()),
        )
        listen: asyncio.Task[None] | None = None
        async with AsyncExitStack() as stack:
            try:
                # asyncio's timeout, not anyio's: the client's task groups outlive this block, and
                # an anyio cancel scope must not close around scopes that stay open.
                async with asyncio.timeout(self.startup_timeout):
                    await stack.enter_async_context(client)
                    capabilities = client.server_capabilities
                    if capabilities.tools is not None and capabilities.tools.list_changed:
                        # Subscribed before the first listing: a change in between is never missed.
                        subscribed = asyncio.Event()
                        listen = asyncio.create_task(
                            self._listen_for_changes(client, subscribed), name=f"mcp-listen:{self.name}"
                        )
                        await subscribed.wait()
                    tools = await self._list_tools(client)
                self.has_resources = capabilities.resources is not None
                info = client.server_info
                self.server_info = f"{info.name} {info.version}".strip() if info is not None else ""
                self.tools = tools
                self.start_seconds = time.monotonic() - began
                self._client = client
                self._set(READY, "")
                ended = await self._serve(client)
            finally:  # before the client closes: nothing may still use it
                self._client = None
                if listen is not None:
                    listen.cancel()
                    await asyncio.gather(listen, return_exceptions=True)
        # Raised after the client is closed: inside, the SDK's task groups would wrap it in a group.
        if ended:
            raise _Ended

    async def _serve(self, client: Any) -> bool:
        """Until stop() (False) or the connection's end (True); re-lists the tools when the
        server says they changed."""
        while True:
            waits = {asyncio.ensure_future(event.wait()): event for event in (self._stop, self._ended, self._relist)}
            try:
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for future in waits:
                    future.cancel()
            fired = {waits[future] for future in done}
            if self._stop in fired:
                return False
            if self._ended in fired:
                return True
            self._relist.clear()
            try:
                async with asyncio.timeout(self.startup_timeout):
                    tools = await self._list_tools(client)
            except TimeoutError:
                continue  # the old list stays; a server this slow shows up in its calls soon enough
            if tools != self.tools:
                self.tools = tools
                self._set(READY, "")

    async def _listen_for_changes(self, client: Any, subscribed: asyncio.Event) -> None:
        """2026-era servers announce tool changes on a `subscriptions/listen` stream; older ones
        send a notification (see _on_message). Either way the runner re-lists. `subscribed` is
        set once the server acknowledged (or cannot do it: then notifications are the way)."""
        from mcp.client.subscriptions import ToolsListChanged

        try:
            async with client.listen(tools_list_changed=True) as subscription:
                subscribed.set()
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self._relist.set()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - not supported, or lost: changes are then seen at a restart
            return
        finally:
            subscribed.set()

    async def _on_message(self, message: Any) -> None:
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._relist.set()

    async def _list_tools(self, client: Any) -> tuple[RemoteTool, ...]:
        tools: list[RemoteTool] = []
        cursor = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                hints = tool.annotations
                tools.append(
                    RemoteTool(
                        tool.name,
                        tool.description or "",
                        dict(tool.input_schema or {}),
                        bool(hints is not None and hints.read_only_hint is True),
                    )
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return tuple(sorted(tools, key=lambda t: t.name))

    def _stderr_hint(self) -> str:
        """The server's last stderr line, credentials redacted while it is whole, then clipped:
        it reaches doctor, `myrm run`'s stderr, the /mcp screen and the model's tool result, and
        a server may well print its own token there (`token=…`, a URL with a password)."""
        line = server_log.last_line(self.log_path)
        return f"; its last stderr line: {scrub(LOG, line)[:STDERR_HINT_CHARS]}" if line else ""

    # calls --------------------------------------------------------------------------------

    def _not_running(self) -> str:
        why = f" ({self.state}: {self.last_error})" if self.last_error else f" ({self.state})"
        return (
            f"MCP server {self.name!r} is not running{why}. Do not retry now; tell the user, who can "
            "restart it from /mcp."
        )

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The server's CallToolResult; McpCallError with a sentence for the model otherwise."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        client = self._client
        if client is None or self.state != READY:
            raise McpCallError(self._not_running())
        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=self.tool_timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise McpCallError(
                    f"MCP server {self.name!r} did not answer {tool} within "
                    f"{self.tool_timeout:g} s; the call was abandoned."
                ) from None
            if exc.code == CONNECTION_CLOSED:
                self._set(CRASHED, f"the connection closed during {tool}{self._stderr_hint()}")
                self._ended.set()
                raise McpCallError(
                    f"MCP server {self.name!r} closed the connection during {tool}"
                    f"{self._stderr_hint()}. It is marked crashed; the user can restart it "
                    "from /mcp."
                ) from None
            raise McpCallError(f"MCP server {self.name!r} refused {tool}: {exc.error.message}") from None
        except McpCallError:
            raise
        except Exception as exc:  # noqa: BLE001 - transport failures (HTTP down, bad JSON) become one sentence
            raise McpCallError(f"MCP server {self.name!r} failed during {tool}: {describe(exc)}") from None

    async def read_resource(self, uri: str) -> Any:
        from mcp.shared.exceptions import MCPError

        client = self._client
        if client is None or self.state != READY:
            raise McpCallError(self._not_running())
        try:
            async with asyncio.timeout(self.tool_timeout):
                return await client.read_resource(uri)
        except TimeoutError:
            raise McpCallError(
                f"MCP server {self.name!r} did not return {uri} within {self.tool_timeout:g} s."
            ) from None
        except MCPError as exc:
            raise McpCallError(f"MCP server {self.name!r} could not read {uri}: {exc.error.message}") from None
        except Exception as exc:  # noqa: BLE001
            raise McpCallError(f"MCP server {self.name!r} failed reading {uri}: {describe(exc)}") from None


class _Ended(Exception):
    """The connection ended without stop(): the server exited or closed its output."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("myrm-tui")
    except PackageNotFoundError:
        return "0"
