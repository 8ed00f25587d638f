"""A session's MCP tool list, frozen: what it offered keeps its place and its bytes.

Why: the tool list is serialized at the very front of every request, so providers cache it with
everything after it; one changed byte early in it makes the whole prompt a cache miss. MCP
servers change their tools mid-session (a server crashes, restarts, loads a plugin). Sorted
afresh at every sync, a new tool would land in the middle and a removed one would shift every
tool after it. Frozen instead:

- a tool that appears mid-session goes to the END of the list (newcomers among themselves in the
  manager's sorted order);
- a tool that disappears keeps its place as a stub (`UnavailableMcpTool`) with the very schema it
  had, byte for byte, so the list it stood in stays a cached prefix; calling it runs nothing and
  returns an error that says the tool is gone (the model learns it there, the user from the
  change note of `agent_sync.py`). Why not a description saying so: that description would be
  the first changed byte, and the cache would break at the stub exactly as at a removal;
- a stub whose tool comes back is replaced by the live tool, in the same place.

The order lives in the session's last `mcp_tools` event (`offered`: the schemas in order), so a
resumed session keeps it too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.mcp.tool import validation_view
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

# Keys of the `mcp_tools` event data this module reads and writes.
OFFERED_KEY = "offered"  # the offered schemas (live and stubs), in the order the prompt lists them
UNAVAILABLE_KEY = "unavailable"  # names among them that are stubs

UNAVAILABLE_RESULT = (
    "the MCP tool {name} is not available any more: its server stopped offering it (or stopped). "
    "Nothing ran. It stays in the tool list only so the prompt's cache holds; do not call it again "
    "unless a later note says it is back, and tell the user if you needed it."
)


class UnavailableMcpTool(Tool):
    """A tool this session offered whose server no longer offers it: same schema, no effect."""

    kind = "read"  # it runs nothing, so there is nothing to approve

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = copy.deepcopy(schema)
        function = self._schema["function"]
        self.name = str(function["name"])
        self.description = str(function.get("description", ""))
        parameters = function.get("parameters")
        self.parameters = validation_view(parameters if isinstance(parameters, dict) else {})

    def schema(self) -> dict[str, Any]:
        return copy.deepcopy(self._schema)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"{self.name} (no longer offered by its MCP server)")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise ToolError(UNAVAILABLE_RESULT.format(name=self.name))


def is_unavailable(tool: Tool) -> bool:
    return isinstance(tool, UnavailableMcpTool)


def _valid(schema: Any) -> bool:
    function = schema.get("function") if isinstance(schema, dict) else None
    return isinstance(function, dict) and isinstance(function.get("name"), str)


def last_offered(store: Store, session_id: str) -> list[dict[str, Any]] | None:
    """The MCP schemas the session offered last, in order; None when it never recorded them
    (a new session, or one recorded before the order was kept)."""
    last = store.events(session_id, event_kinds.MCP_TOOLS, limit=1)
    offered = last[-1].data.get(OFFERED_KEY) if last else None
    if not isinstance(offered, list):
        return None
    return [s for s in offered if _valid(s)]


def frozen_order(previous: Sequence[dict[str, Any]], live: Sequence[Tool]) -> list[Tool]:
    """`live` (the servers' tools now, in the manager's order) laid out the way the session
    offered them before: the previous tools in place (live, or a stub with the same schema),
    then the newcomers."""
    by_name = {tool.name: tool for tool in live}
    out: list[Tool] = []
    placed: set[str] = set()
    for schema in previous:
        name = str(schema["function"]["name"])
        if name in placed:
            continue
        placed.add(name)
        out.append(by_name[name] if name in by_name else UnavailableMcpTool(schema))
    out.extend(tool for tool in live if tool.name not in placed)
    return out


def session_tools(store: Store, session_id: str, live: Sequence[Tool]) -> list[Tool]:
    """The MCP tools a build of this session offers: `live` in the session's frozen order."""
    previous = last_offered(store, session_id)
    return list(live) if previous is None else frozen_order(previous, live)


def schema_bytes(tools: Sequence[Tool]) -> str:
    """The tools as the request serializes them, for comparing two lists exactly."""
    return json.dumps([[tool.schema(), is_unavailable(tool)] for tool in tools], sort_keys=True, separators=(",", ":"))
