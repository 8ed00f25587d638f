"""The agent layer: the turn loop, tools, approvals, system prompts, execution fingerprint.

`Agent` and `SessionRuntime` load on first use (PEP 562): importing any `myrm_tui.agent.*` module
(the TUI's first frame needs a few small ones) must not pull in the turn loop, the tools and
the engine, which cost about a quarter of a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.session_runtime import SessionRuntime

__all__ = ["Agent", "SessionRuntime"]


def __getattr__(name: str) -> Any:
    if name == "Agent":
        from myrm_tui.agent.agent import Agent

        return Agent
    if name == "SessionRuntime":
        from myrm_tui.agent.session_runtime import SessionRuntime

        return SessionRuntime
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
