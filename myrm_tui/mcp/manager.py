"""Every MCP server of one app (the TUI) or one run (`myrm run`): start, tools, restart, close.

Why the owner is the app and not the agent: agents are rebuilt whenever the settings change (the
fingerprint decides), and a rebuild must not restart a server or lose its state. The agent only
asks the manager for the current tool list (`tools()`), and waits for servers still starting
before its first model call (`wait_started()`), so the first paint never waits for a server
and the first prompt never misses one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.agent.events import Notice
from myrm_tui.mcp.agent_sync import sync_mcp_tools
from myrm_tui.mcp.connection import READY, STARTING, STOPPED, ServerConnection, ServerStatus
from myrm_tui.settings.sections.mcp_servers import McpServerConfig

if TYPE_CHECKING:
    from myrm_tui.agent.ports import ToolSyncTarget
    from myrm_tui.agent.tools.base import Tool
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store.store import Store


def _import_sdk() -> None:
    """The SDK's import (~0.5 s), done in a worker thread before the first server starts."""
    import mcp.client.client
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


class McpManager:
    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        workspace: Path,
        startup_timeout: float,
        tool_timeout: float,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = Path(workspace)
        self.startup_timeout = startup_timeout
        self.tool_timeout = tool_timeout
        self._env = env
        self._connections: dict[str, ServerConnection] = {}
        self._listeners: list[Callable[[], None]] = []
        self._announced: set[tuple[str, str, str]] = set()
        self._start_task: asyncio.Future[None] | None = None  # the one start() of this manager
        self._closed = False
        self._import: asyncio.Future[None] | None = None
        for config in servers.values():
            self._connections[config.name] = self._connection(config)

    @classmethod
    def from_settings(cls, settings: Settings, workspace: Path) -> McpManager:
        return cls(
            settings.mcp_servers,
            workspace=workspace,
            startup_timeout=float(settings.mcp_startup_timeout),
            tool_timeout=float(settings.mcp_tool_timeout),
        )

    def _connection(self, config: McpServerConfig) -> ServerConnection:
        return ServerConnection(
            config,
            workspace=self.workspace,
            startup_timeout=self.startup_timeout,
            tool_timeout=self.tool_timeout,
            env=self._env,
            on_change=self._changed,
        )

    # what the app and the agent read ------------------------------------------------------

    @property
    def configured(self) -> bool:
        return bool(self._connections)

    def names(self) -> list[str]:
        return sorted(self._connections)

    def connection(self, name: str) -> ServerConnection | None:
        return self._connections.get(name)

    def connections(self) -> list[ServerConnection]:
        return [self._connections[name] for name in self.names()]

    def statuses(self) -> list[ServerStatus]:
        return [c.status() for c in self.connections()]

    def starting(self) -> list[str]:
        """Servers whose start has not ended yet (or that will start once start() runs)."""
        launching = self._start_task is None or not self._start_task.done()
        return [
            c.name
            for c in self.connections()
            if c.state == STARTING or (launching and c.config.enabled and c.state == STOPPED)
        ]

    def ready(self) -> list[ServerConnection]:
        return [c for c in self.connections() if c.state == READY]

    def tools(self, *, trust_read_only_hints: bool = False) -> tuple[Tool, ...]:
        """The model's MCP tools: every offered tool of every ready server, sorted by prompt name,
        then `mcp_read_resource` if a ready server has resources. Same servers and tools, same
        tuple (byte-identical schemas): the prompt prefix stays cache-stable."""
        from myrm_tui.mcp.tool import build_tools

        return build_tools(self.ready(), trust_read_only_hints=trust_read_only_hints)

    def session_tools(self, store: Store, session_id: str, *, trust_read_only_hints: bool = False) -> tuple[Tool, ...]:
        """`tools()` laid out in `session_id`'s frozen order (mcp/frozen_order.py): what a build
        of that session offers, so a rebuild between turns keeps the cached tool list."""
        from myrm_tui.mcp.frozen_order import session_tools

        return tuple(session_tools(store, session_id, self.tools(trust_read_only_hints=trust_read_only_hints)))

    def sync_turn(self, agent: ToolSyncTarget) -> AsyncIterator[Notice]:
        """The start of `agent`'s turn: its build gets this manager's current tools.

        Why the agent calls this method rather than importing agent_sync: mcp sits above the agent
        in the layers (its tools are agent Tools), so the agent only knows the manager it was given."""
        return sync_mcp_tools(agent)

    def announce_failure(self, connection: ServerConnection) -> bool:
        """True the first time this failure of this server is to be told to the user (the agent
        says it once in the transcript, not at every turn)."""
        key = (connection.name, connection.state, connection.last_error)
        if key in self._announced:
            return False
        self._announced.add(key)
        return True

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Called (on the event loop) whenever a server's state or tools change (the /mcp screen)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, _connection: ServerConnection | None = None) -> None:
        for listener in list(self._listeners):
            listener()

    # lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every enabled server in the background; returns once they are launched (the
        SDK import runs in a thread first, off the event loop). Every caller awaits the same
        launch, so a first message sent during the import still waits for the servers."""
        if self._closed:
            return
        if self._start_task is None:
            self._start_task = asyncio.ensure_future(self._launch())
        await asyncio.shield(self._start_task)

    async def _launch(self) -> None:
        if not any(c.config.enabled for c in self._connections.values()):
            return
        await self._sdk_imported()
        if self._closed:
            return
        for connection in self.connections():
            connection.start()

    async def _sdk_imported(self) -> None:
        if self._import is None:
            self._import = asyncio.ensure_future(asyncio.to_thread(_import_sdk))
        await asyncio.shield(self._import)

    async def wait_started(self) -> None:
        """Until no server is starting (each start has its own deadline, so this is bounded)."""
        await self.start()
        for connection in self.connections():
            await connection.wait_started()

    def set_timeouts(self, startup_timeout: float, tool_timeout: float) -> None:
        """New `mcp_startup_timeout` / `mcp_tool_timeout` settings: the next start and the next
        call use them (a server's own `*_timeout_sec` still wins)."""
        self.startup_timeout, self.tool_timeout = startup_timeout, tool_timeout
        for connection in self._connections.values():
            connection.startup_timeout = connection.config.startup_timeout or startup_timeout
            connection.tool_timeout = connection.config.tool_timeout or tool_timeout

    async def restart(self, name: str) -> ServerStatus:
        connection = self._connections[name]
        await self._sdk_imported()
        await connection.restart()
        return connection.status()

    async def configure(self, servers: Mapping[str, McpServerConfig]) -> None:
        """New settings (the user trusted the workspace, say): start servers that are new or whose
        entry changed, stop the ones no longer configured; unchanged ones keep running."""
        if self._closed:
            return
        old = self._connections
        keep = {name: c for name, c in old.items() if servers.get(name) == c.config}
        gone = [c for name, c in old.items() if name not in keep]
        fresh = {name: self._connection(config) for name, config in servers.items() if name not in keep}
        self._connections = {**keep, **fresh}
        await asyncio.gather(*(c.stop() for c in gone))
        if self._start_task is not None and fresh:
            await self._sdk_imported()
            for connection in fresh.values():
                connection.start()
        self._changed()

    async def aclose(self) -> None:
        """Stop every server (concurrently; each stop is bounded) — no server outlives its app."""
        self._closed = True
        if self._start_task is not None and not self._start_task.done():
            await asyncio.gather(self._start_task, return_exceptions=True)  # the import; then nothing starts
        await asyncio.gather(*(c.stop() for c in self._connections.values()), return_exceptions=True)

    async def probe(self, names: Sequence[str] | None = None) -> list[ServerStatus]:
        """`myrm doctor`: start (all or `names`), wait, report, stop."""
        await self.start()
        await self.wait_started()
        statuses = [s for s in self.statuses() if names is None or s.name in names]
        await self.aclose()
        return statuses
