"""What the map engine needs from the agent that runs it, as Protocols.

Why Protocols and not the Agent and SubagentRunner classes: the tools package imports this
engine, and the agent and the subagent runner import the tools package, so naming them here
would close an import cycle (`lint-imports`). These are the few doors the engine uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from myrm_tui.agent.map.item_answer import Conversation
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.ports import StreamFn
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store


class Route(Protocol):
    """One model of the summarizer chain (agent/model_calls.SummaryRoute)."""

    @property
    def model(self) -> str: ...

    @property
    def settings(self) -> CallSettings: ...


class MapHost(Protocol):
    """The parent agent: its store and session (usage and resume records), its models and the
    stream its calls go through (a test's scripted provider, a replay's recorder)."""

    store: Store
    session_id: str
    settings: Settings
    stream_fn: StreamFn | None

    @property
    def model_name(self) -> str: ...

    def call_settings(self) -> CallSettings: ...

    def summary_routes(self) -> Sequence[Route]: ...


class ChildFactory(Protocol):
    """The parent's subagent runner, seen by agentic_map: a child with the named tools only, held
    to the same conversation as a plain item's model call (item_answer.Conversation)."""

    enabled: bool

    def isolated(self, title: str, tools: frozenset[str], instructions: str, model: str | None) -> Conversation: ...
