"""The agent's door to tools it does not own: the MCP servers' tools, which come and go while a
session runs.

Why Protocols here: `mcp` sits above `agent` in the layers (an MCP tool is an agent `Tool`), so
the agent cannot name `McpManager`; it names this port instead, and the manager fits it. The
built-in tools need no port: `build.py` assembles them, with the source's current tools, into the
build's one registry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from myrm_tui.agent.build import AgentBuild
    from myrm_tui.agent.events import Notice
    from myrm_tui.agent.tools.base import Tool
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store.store import Store


class ToolSyncTarget(Protocol):
    """What a tool source reads and replaces at the start of a turn: the agent's build (rebuilt
    with the source's current tools) and the session log (where a change of tools is noted)."""

    build: AgentBuild

    @property
    def settings(self) -> Settings: ...

    @property
    def workspace(self) -> Path: ...

    @property
    def extra_tools(self) -> Sequence[Tool]: ...

    @property
    def store(self) -> Store: ...

    @property
    def session_id(self) -> str: ...


class ToolSource(Protocol):
    """Tools offered beside the built-ins (the app's MCP servers). `tools()` is read when a build
    is made; `sync_turn` starts every turn, so the list in the prompt moves between turns only."""

    def tools(self, *, trust_read_only_hints: bool = False) -> Sequence[Tool]: ...

    def session_tools(self, store: Store, session_id: str, *, trust_read_only_hints: bool = False) -> Sequence[Tool]:
        """`tools()` in the order the session offered them (newcomers last, the gone as stubs)."""
        ...

    def sync_turn(self, agent: ToolSyncTarget) -> AsyncIterator[Notice]: ...
