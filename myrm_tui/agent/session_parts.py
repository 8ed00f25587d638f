"""What belongs to a session rather than to one Agent: its context engine, its background
commands and whether its start hooks ran.

Why apart from the Agent: the agent is rebuilt whenever its fingerprint changes (a settings or
model switch), but the engine's incremental state (rendered rows, cache warmth, the previous
request for the cache-break detector), the commands still running and the hook lifecycle belong
to the session and must survive the rebuild. The SessionRuntime (agent/session_runtime.py) holds
one of these and hands it to every agent it builds; an agent built alone (a subagent, a test)
gets fresh ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from myrm_tui.agent.hooks import HookLifecycle
from myrm_tui.agent.tools.shell.background import BackgroundJobs
from myrm_tui.context.engine import ContextEngine

if TYPE_CHECKING:
    from myrm_tui.store import Store


@dataclass
class SessionParts:
    engine: ContextEngine
    background: BackgroundJobs = field(default_factory=BackgroundJobs)
    hooks: HookLifecycle = field(default_factory=HookLifecycle)

    @classmethod
    def fresh(cls, store: Store, session_id: str) -> SessionParts:
        """The parts of a session opened now: the engine is rebuilt from the store."""
        return cls(ContextEngine(store, session_id))
