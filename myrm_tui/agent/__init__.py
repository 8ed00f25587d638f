"""The agent layer: the turn loop, tools, approvals, system prompts, execution fingerprint.

`Agent` and `AgentCache` load on first use (PEP 562): importing any `myrm_tui.agent.*` module
(the TUI's first frame needs a few small ones) must not pull in the turn loop, the tools and
the engine, which cost about a quarter of a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.cache import AgentCache

__all__ = ["Agent", "AgentCache"]


def __getattr__(name: str) -> Any:
    if name == "Agent":
        from myrm_tui.agent.agent import Agent

        return Agent
    if name == "AgentCache":
        from myrm_tui.agent.cache import AgentCache

        return AgentCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
