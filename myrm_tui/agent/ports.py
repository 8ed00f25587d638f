"""The agent's doors: to tools it does not own (the MCP servers' tools, which come and go while a
session runs), and to the agent itself for the side calls made on its behalf.

Why Protocols here: `mcp` sits above `agent` in the layers (an MCP tool is an agent `Tool`), so
the agent cannot name `McpManager`; it names this port instead, and the manager fits it. The
built-in tools need no port: `build.py` assembles them, with the source's current tools, into the
build's one registry. The side calls (arrival summaries, cache preheat and keep-alive) are
modules `agent.py` imports, so they name the part of the Agent they read here instead of
importing it back (an import cycle).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from myrm_tui.agent.events import Notice
    from myrm_tui.agent.setup.build import AgentBuild
    from myrm_tui.agent.setup.model_calls import SummaryRoute
    from myrm_tui.agent.tools.base import Tool
    from myrm_tui.context.engine import ContextEngine
    from myrm_tui.context.prompt import AssembledPrompt
    from myrm_tui.context.window.turn_input import TurnInput
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.ports import StreamFn
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


class SideCallAgent(Protocol):
    """What a model call made for an agent beside its turn reads of it (an arrival summary): the
    session it records usage in, its model and build, and the stream its own calls go through
    (so the call reaches the same provider path, the owner's local-model workers included)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> Store: ...

    @property
    def session_id(self) -> str: ...

    @property
    def model_name(self) -> str: ...

    @property
    def build(self) -> AgentBuild: ...

    @property
    def stream_fn(self) -> StreamFn | None: ...

    def summary_routes(self) -> list[SummaryRoute]: ...


class WarmAgent(SideCallAgent, Protocol):
    """What the cache preheat and keep-alive read besides: whether a turn runs, the engine (its
    clock, last call, prompt assembly) and the call settings of the agent's next request."""

    @property
    def busy(self) -> bool: ...

    @property
    def engine(self) -> ContextEngine: ...

    @property
    def last_prompt(self) -> AssembledPrompt | None: ...

    def turn_input(self, force_tier: str | None = None, trigger: str = "auto") -> TurnInput: ...

    def call_settings(self) -> CallSettings: ...
