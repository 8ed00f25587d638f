"""The loader's MCP layer: `[mcp_servers.NAME]` tables and `.mcp.json` files into the settings.

Why its own module: the entries are parsed by settings/sections/mcp_servers.py (the MCP client starts servers
from the same entries); what is left here is the loader's part — problems with file and line, the scope of
the file, and the workspace gate: a server entry is a command that runs (or an endpoint that
receives the conversation), so a workspace's servers wait for trust like `model` and `api_base`,
and are listed in the trust dialog with the command line they would run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.settings.sections.mcp_servers import (
    STDIO,
    USER,
    WORKSPACE,
    McpServerConfig,
    server_from_toml,
    servers_from_mcp_json,
)

if TYPE_CHECKING:  # the loader's modules import this one; the types only annotate
    from myrm_tui.settings.config_files.layers import Layers
    from myrm_tui.settings.config_files.toml_lines import Locator
    from myrm_tui.settings.config_files.workspace_gate import Gate

MCP_TABLE = "mcp_servers"
USER_MCP_JSON = "mcp.json"  # in the user config folder (a visible name there; `.mcp.json` in a repo)
WORKSPACE_MCP_JSON = ".mcp.json"  # Claude Code's project file, at the workspace root


def user_mcp_json(user_dir: Path) -> Path:
    return user_dir / USER_MCP_JSON


def workspace_mcp_json(workspace_root: Path) -> Path:
    return workspace_root / WORKSPACE_MCP_JSON


def trust_label(config: McpServerConfig, *, json_file: bool) -> str:
    """How the trust dialog names the entry: the file's own spelling, and what the value is."""
    what = "command" if config.transport == STDIO else "url"
    if json_file:
        return f"{WORKSPACE_MCP_JSON} mcpServers.{config.name} {what}"
    return f"[{MCP_TABLE}.{config.name}] {what}"


def apply_toml_table(layers: Layers, name: str, locate: Locator, table: Any, gate: Gate) -> None:
    """`[mcp_servers]` of one config file into `layers`."""
    if not isinstance(table, dict):
        layers.problem(
            name,
            locate.key(MCP_TABLE),
            'write MCP servers as tables: [mcp_servers.NAME] with command = "..." or url = "...".',
        )
        return
    scope = getattr(gate, "scope", USER)
    for server, entry in table.items():
        line = locate.table(MCP_TABLE, server)
        config, problems = server_from_toml(server, entry, source=name, scope=scope)
        for problem in problems:
            layers.problem(name, line, problem.message)
        if config is not None and gate.mcp_server(config, trust_label(config, json_file=False), line):
            layers.mcp_servers[server] = config


def apply_json_file(layers: Layers, name: str, raw: bytes, gate: Gate) -> None:
    """One `.mcp.json` (or the user's `mcp.json`)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        layers.problem(name, None, f"cannot read the file ({exc}); no server in it is used.")
        return
    scope = getattr(gate, "scope", USER)
    configs, problems = servers_from_mcp_json(text, source=name, scope=scope)
    for problem in problems:
        layers.problem(name, _json_line(text, problem.server), problem.message)
    for config in configs:
        line = _json_line(text, config.name)
        if gate.mcp_server(config, trust_label(config, json_file=scope == WORKSPACE), line):
            layers.mcp_servers[config.name] = config


def _json_line(text: str, server: str | None) -> int | None:
    """Best effort: the line where `"server":` opens its entry (json does not report positions)."""
    if server is None:
        return None
    pattern = re.compile(r"^\s*" + re.escape(f'"{server}"') + r"\s*:")
    for index, line in enumerate(text.splitlines()):
        if pattern.match(line):
            return index + 1
    return None
