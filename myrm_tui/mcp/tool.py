"""An MCP server's tool as a myrm Tool: the server's schema for the model, the call for the agent.

Approval: an MCP tool runs code that myrm cannot see, so it is kind "exec" — it asks under the
`ask` and `auto-edit` policies and runs under `yolo`, like bash. A server's `readOnlyHint` makes a
tool kind "read" (never asks) only when the user set `mcp_trust_read_only`: the hint comes
from the server, which is exactly who the approval guards against. `permission_names` are the
names a permission rule would match (Claude Code's spelling: `mcp__server` for every tool of a
server, `mcp__server__tool` for one), for the allow/deny rule store.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult
from myrm_tui.mcp.connection import McpCallError, RemoteTool, ServerConnection
from myrm_tui.mcp.names import server_prefix, unique_names
from myrm_tui.mcp.result import READ_RESOURCE_TOOL, render_resource, render_result

# Characters of the arguments shown in an approval prompt's one line.
PREVIEW_ARGUMENT_CHARS = 300
# JSON-schema types validate_arguments checks itself; anything else is left to the server.
_SIMPLE_TYPES = frozenset({"string", "integer", "number", "boolean"})


def validation_view(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as myrm's own argument check reads it: required keys, known keys and simple
    types. Types it does not model (unions, `["string", "null"]`, `$ref`) are dropped here and
    left to the server, which validates anyway; the model is sent the server's schema untouched."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    view_props: dict[str, Any] = {}
    for key, spec in properties.items():
        spec = dict(spec) if isinstance(spec, Mapping) else {}
        if spec.get("type") not in _SIMPLE_TYPES:
            spec.pop("type", None)
        view_props[str(key)] = spec
    required = schema.get("required")
    if not isinstance(required, list):
        required = []
    return {"type": "object", "properties": view_props, "required": [r for r in required if r in view_props]}


def _model_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The server's input schema, with the root the providers insist on (`type: object` and a
    `properties` table) filled in when a server leaves them out."""
    out = copy.deepcopy(dict(schema))
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


class McpTool(Tool):
    kind = "exec"

    def __init__(
        self, name: str, server: ServerConnection, remote: RemoteTool, *, trust_read_only_hints: bool = False
    ) -> None:
        self.name = name
        self.server = server
        self.remote = remote
        self.description = remote.description or f"{remote.name} (a tool of the MCP server {server.name})"
        self.parameters = validation_view(remote.input_schema)
        self._schema = _model_schema(remote.input_schema)
        if trust_read_only_hints and remote.read_only:
            self.kind = "read"

    @property
    def permission_names(self) -> tuple[str, str]:
        return server_prefix(self.server.name), self.name

    @property
    def runs_outside_sandbox(self) -> str:
        """What the approval prompt says instead of the bash sandbox's limits: they do not apply."""
        return f"runs in the MCP server {self.server.name} (its own process, not sandboxed)"

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self._schema},
        }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if len(shown) > PREVIEW_ARGUMENT_CHARS:
            shown = shown[: PREVIEW_ARGUMENT_CHARS - 1] + "…"
        return ApprovalPreview(summary=f"MCP {self.server.name}: {self.remote.name} {shown}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = await self.server.call_tool(self.remote.name, args)
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        rendered = render_result(result, self.server.name, ctx)
        if rendered.is_error:
            return ToolResult(f"error: the MCP tool {self.remote.name} failed: {rendered.text}", "error")
        return ToolResult(rendered.text)


class ReadResourceTool(Tool):
    """Reads a resource a server offers (a link in a tool result): on request, never eagerly, since
    a resource can be large and the link alone tells the model what exists."""

    name = READ_RESOURCE_TOOL
    kind = "exec"  # it talks to the same servers the tools do, under the same approval
    description = (
        "Read a resource from an MCP server, e.g. a resource link a tool result named. "
        "Large contents are stored and excerpted like any tool output."
    )

    def __init__(self, servers: Sequence[ServerConnection]) -> None:
        self.servers = {s.name: s for s in servers}
        names = sorted(self.servers)
        self.parameters = {
            "type": "object",
            "properties": {
                "server": {"type": "string", "enum": names, "description": "The MCP server's name."},
                "uri": {"type": "string", "description": "The resource URI."},
            },
            "required": ["server", "uri"],
        }

    @property
    def permission_names(self) -> tuple[str, ...]:
        return (self.name,)

    @property
    def runs_outside_sandbox(self) -> str:
        return "asks an MCP server (its own process, not sandboxed)"

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"MCP {args.get('server')}: read {args.get('uri')}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server = self.servers.get(str(args["server"]))
        if server is None:
            raise ToolError(
                f"no MCP server named {args['server']!r} with resources; known: "
                f"{', '.join(sorted(self.servers)) or 'none'}."
            )
        try:
            result = await server.read_resource(str(args["uri"]))
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        return ToolResult(render_resource(result, server.name, ctx))


def build_tools(servers: Sequence[ServerConnection], *, trust_read_only_hints: bool) -> tuple[Tool, ...]:
    """Tools of the ready servers that their entries offer, sorted by prompt name; the resource
    reader last, when a server has resources."""
    pairs = {(s.name, t.name): (s, t) for s in servers for t in s.tools if s.config.offers(t.name)}
    names = unique_names(pairs)
    tools: list[Tool] = [
        McpTool(names[key], server, remote, trust_read_only_hints=trust_read_only_hints)
        for key, (server, remote) in pairs.items()
    ]
    tools.sort(key=lambda tool: tool.name)
    with_resources = [s for s in servers if s.has_resources]
    if with_resources:
        tools.append(ReadResourceTool(with_resources))
    return tuple(tools)
