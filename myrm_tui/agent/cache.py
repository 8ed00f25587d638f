"""AgentCache: hand out the current Agent, rebuilding it only when its fingerprint changes.

Why: settings can change mid-session (settings screen, /model). Rebuilding on every get would
re-read workspace rules and reset per-agent state; never rebuilding would keep a stale model or
policy. The fingerprint decides. A model change is also recorded as a MODEL_SWITCH event so the
context engine and the history know where the window changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from myrm_tui.agent.agent import Agent, StreamFn
from myrm_tui.agent.build import build_agent
from myrm_tui.agent.tools.base import Tool
from myrm_tui.settings.settings import Settings
from myrm_tui.store import event_kinds


class AgentCache:
    def __init__(
        self,
        *,
        store: Any,
        session_id: str,
        workspace: Path,
        stream_fn: StreamFn | None = None,
        extra_tools: Sequence[Tool] = (),
        mcp: Any = None,
    ):
        self.store = store
        self._mcp = mcp  # the app's McpManager (or None): its current tools are part of every build
        self.workspace = Path(workspace).resolve()
        self._session_id = session_id
        self._stream_fn = stream_fn
        self._extra_tools = tuple(extra_tools)
        self._agent: Agent | None = None
        self.rebuilds = 0  # how many Agents were built (observable by the TUI and tests)

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def current(self) -> Agent | None:
        return self._agent

    def get(self, settings: Settings) -> Agent:
        mcp_tools = (
            self._mcp.tools(trust_read_only_hints=bool(settings.mcp_trust_read_only)) if self._mcp is not None else ()
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
            mcp=self._mcp,
            background=old.background if old is not None else None,  # same session: they keep running
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
