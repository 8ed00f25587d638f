"""The tool set offered to the model, in a fixed order.

Why fixed: the tool list is part of the prompt prefix providers cache; reordering it between
calls (e.g. iterating a set) would miss the cache on every request.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from myrm_tui.agent.tools.base import Tool
from myrm_tui.agent.tools.files.edit import FileEdit
from myrm_tui.agent.tools.files.read import FileRead
from myrm_tui.agent.tools.files.write import FileWrite
from myrm_tui.agent.tools.llm_map import AgenticMap, LlmMap
from myrm_tui.agent.tools.recall_tools import recall_tools
from myrm_tui.agent.tools.search import Glob, Grep
from myrm_tui.agent.tools.shell.background_tools import BashKill, BashOutput
from myrm_tui.agent.tools.shell.bash import Bash
from myrm_tui.agent.tools.task import Task
from myrm_tui.agent.tools.web_fetch import WebFetch


class ToolRegistry:
    def __init__(self, tools: Sequence[Tool]):
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names: {names}")
        self._tools: tuple[Tool, ...] = tuple(tools)
        self._by_name = {t.name: t for t in self._tools}
        self._schemas = tuple(t.schema() for t in self._tools)

    def get(self, name: str) -> Tool | None:
        return self._by_name.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def schemas(self) -> list[dict[str, Any]]:
        """The same list, in the same order, every call (a deep copy: callers may annotate it)."""
        return copy.deepcopy(list(self._schemas))

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


def default_tools(extra: Sequence[Tool] = (), mcp_tools: Sequence[Tool] = (), *, maps: bool = True) -> ToolRegistry:
    """Built-in tools, then the recall tools, then extras, then MCP servers' tools, each group
    in a fixed order.

    An extra named like a recall tool takes that tool's place (same position, so the cached
    tool list keeps its order) instead of being offered twice. MCP tools come last, in the order
    given: the manager's list sorted by name (mcp/tool.py), laid out in the session's frozen order
    (mcp/frozen_order.py), so a server starting, stopping or changing its tools changes the end
    of the list only, and the same tools always give the same bytes."""
    by_name = {tool.name: tool for tool in extra}
    recall = tuple(by_name.get(tool.name, tool) for tool in recall_tools())
    rest = tuple(tool for tool in extra if not any(tool is chosen for chosen in recall))
    return ToolRegistry(
        (
            FileRead(),
            FileWrite(),
            FileEdit(),
            Bash(),
            BashOutput(),
            BashKill(),
            Grep(),
            Glob(),
            WebFetch(),
            Task(),
            *((LlmMap(), AgenticMap()) if maps else ()),
            *recall,
            *rest,
            *mcp_tools,
        )
    )
