"""SessionRuntime: one open session, the one door the TUI, `myrm run`, `myrm replay` and the ACP
server send messages through.

Why one object: a session's state (its context engine, background commands, hook lifecycle:
agent/session_parts.py) outlives any one Agent, which is rebuilt whenever its fingerprint changes
(the settings screen, /model). Rebuilding on every message would re-read workspace rules and
reset per-agent state; never rebuilding would keep a stale model or policy, so the fingerprint
decides. Before this object the session's state sat in process-wide registries keyed by store
and session id, which every caller had to remember to release; now it lives exactly as long as
the runtime that was opened for it and is closed with it. A model change is also recorded as a
MODEL_SWITCH event so the engine and the history know where the window changed.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.agent import Agent, StreamFn
from myrm_tui.agent.events import AgentEvent, Notice
from myrm_tui.agent.gc_policy import hold_full_passes, release_full_passes
from myrm_tui.agent.ports import ToolSource
from myrm_tui.agent.session_parts import SessionParts
from myrm_tui.agent.setup.build import build_agent
from myrm_tui.agent.tools.base import Tool
from myrm_tui.agent.tools.shell.background import BackgroundInfo
from myrm_tui.context.engine import ContextEngine
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.agent.tools.editor_port import EditorFiles
    from myrm_tui.store import Store


class SessionRuntime:
    def __init__(
        self,
        *,
        store: Store,
        session_id: str,
        workspace: Path,
        stream_fn: StreamFn | None = None,
        extra_tools: Sequence[Tool] = (),
        mcp: ToolSource | None = None,
        headless: bool = False,
        engine: ContextEngine | None = None,
        editor: EditorFiles | None = None,
    ):
        self.store = store
        self._mcp = mcp  # the app's McpManager (or None): its current tools are part of every build
        self.workspace = Path(workspace).resolve()
        self._session_id = session_id
        self._stream_fn = stream_fn
        self._extra_tools = tuple(extra_tools)
        self._headless = headless  # `myrm run`, replay, ACP without a client to ask: nobody answers
        self._editor = editor  # ACP: the editor's files, which every agent built here reads through
        # `engine`: a caller that needs its own engine settings (replay's clock and config).
        self.parts = SessionParts(engine) if engine is not None else SessionParts.fresh(store, session_id)
        self._agent: Agent | None = None
        self.rebuilds = 0  # how many Agents were built (observable by the TUI and tests)

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def engine(self) -> ContextEngine:
        return self.parts.engine

    @property
    def current(self) -> Agent | None:
        """The agent built for the last message (None before the first)."""
        return self._agent

    def agent_for(self, settings: Settings) -> Agent:
        """The agent for these settings: the current one while its fingerprint holds, else a new
        one on the same session parts."""
        # In the session's frozen order (mcp/frozen_order.py), as the turn's sync lays them out:
        # a fresh sort would differ after a mid-session change and rebuild the agent every message.
        mcp_tools = (
            self._mcp.session_tools(
                self.store, self._session_id, trust_read_only_hints=bool(settings.mcp_trust_read_only)
            )
            if self._mcp is not None
            else ()
        )
        build = build_agent(settings, self.workspace, self._extra_tools, mcp_tools=mcp_tools)
        old = self._agent
        if old is not None and old.fingerprint == build.fingerprint:
            return old
        agent = Agent(
            store=self.store,
            session_id=self._session_id,
            settings=settings,
            workspace=self.workspace,
            stream_fn=self._stream_fn,
            build=build,
            extra_tools=self._extra_tools,
            headless=self._headless,
            mcp=self._mcp,
            parts=self.parts,
            editor=self._editor,
        )
        if old is not None and old.model_name != agent.model_name:
            self.store.append_event(
                self._session_id,
                event_kinds.MODEL_SWITCH,
                {
                    "old": old.model_name,
                    "new": agent.model_name,
                    "old_window": old.build.model.context_window,
                    "new_window": agent.build.model.context_window,
                },
            )
            self.store.set_session_model(self._session_id, agent.model_name)
        self._agent = agent
        self.rebuilds += 1
        return agent

    def adopt(self, agent: Agent) -> Agent:
        """Use an agent built by the caller (replay's recorded tools and prompt) as the current
        one; it must have been built on this runtime's parts."""
        if agent.parts is not self.parts:
            raise ValueError("the agent was built for another session's parts")
        self._agent = agent
        return agent

    async def send(
        self, content: str | list[dict[str, Any]], settings: Settings | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """One user message, its turn's events as they happen. `settings`: those of this message
        (a rebuild if its fingerprint changed); None keeps the current agent."""
        if settings is not None:
            agent = self.agent_for(settings)
        elif self._agent is not None:
            agent = self._agent
        else:
            raise RuntimeError("the first message of a session needs its settings")
        hold_full_passes()  # agent/gc_policy.py: a full pass waits for the end of the turn
        try:
            async with aclosing(agent.turn(content)) as events:
                async for event in events:
                    yield event
        finally:
            release_full_passes()

    async def aclose(self) -> list[BackgroundInfo]:
        """The session ends: its background commands stop (unread output kept in the vault) and
        its session_end hooks run (their failures: `take_hook_notices`). Returns the stopped
        commands."""
        if self._agent is None:
            return await self.parts.background.aclose()
        return await self._agent.aclose()

    def take_hook_notices(self) -> list[Notice]:
        return self._agent.take_hook_notices() if self._agent is not None else []
