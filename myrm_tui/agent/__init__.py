"""The agent layer: the turn loop, tools, approvals, system prompts, execution fingerprint."""

from myrm_tui.agent.agent import Agent
from myrm_tui.agent.cache import AgentCache

__all__ = ["Agent", "AgentCache"]
