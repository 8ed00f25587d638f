"""MCP servers the editor passes in `session/new` and `session/load`, as myrm's server entries.

Whose they are: the editor's own configuration (the user's), not the repository's, so they join
at user scope without the trust dialog a workspace `.mcp.json` needs. They still are the user's
to see: every one is announced in the session's first turn with what runs or where it connects
(credentials redacted: McpServerConfig.summary), and their tools go through the same approval
policy and permission rules as a configured server's (`mcp__server__tool`). A configured server
of the same name wins (the user's myrm config is explicit); SSE, the transport the MCP SDK
deprecated and myrm's client refuses in config files too, is skipped with a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

from myrm_tui.settings.sections.mcp_servers import HTTP, STDIO, USER, McpServerConfig

ClientMcpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

SOURCE = "the editor (ACP session)"  # where a server came from, as /mcp and notes name sources


@dataclass(frozen=True)
class ClientServers:
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the user is told: each server added, and each one skipped


def _config(server: McpServerStdio | HttpMcpServer) -> McpServerConfig:
    if isinstance(server, McpServerStdio):
        return McpServerConfig(
            name=server.name,
            transport=STDIO,
            command=server.command,
            args=tuple(server.args),
            env=tuple(sorted((v.name, v.value) for v in server.env)),
            source=SOURCE,
            scope=USER,
        )
    return McpServerConfig(
        name=server.name,
        transport=HTTP,
        url=server.url,
        headers=tuple(sorted((h.name, h.value) for h in server.headers)),
        source=SOURCE,
        scope=USER,
    )


def client_servers(given: Sequence[ClientMcpServer] | None, configured: Mapping[str, McpServerConfig]) -> ClientServers:
    servers: dict[str, McpServerConfig] = {}
    notes: list[str] = []
    for server in given or ():
        if isinstance(server, (SseMcpServer, AcpMcpServer)):
            notes.append(f"MCP server {server.name!r} from the editor skipped: myrm connects over stdio and http only")
            continue
        if not server.name.strip():
            notes.append("an MCP server from the editor without a name was skipped")
            continue
        if server.name in configured or server.name in servers:
            notes.append(f"MCP server {server.name!r} from the editor skipped: a server of that name is configured")
            continue
        config = _config(server)
        servers[config.name] = config
        notes.append(f"MCP server {config.name!r} from the editor: {config.summary()}")
    return ClientServers(servers, tuple(notes))
