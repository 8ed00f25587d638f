"""The "MCP servers" section of `myrm doctor`: every configured server, started for real.

Why start them: a server entry can only be judged by running it (the command exists, the package
installs, the handshake works, the tools list). Doctor starts them all at once, each with its own
start deadline, prints what each one offers and how long it took, and stops them. Never fatal:
myrm works without its MCP servers; a failed one is a ✗ line with the reason and its log.
Workspace servers that wait for trust are listed, never started.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from myrm_tui.terminal_text import for_terminal

OK, BAD, INFO = "✓", "✗", "·"
# Tool names listed per server before "…" (doctor output is read in a terminal, one line each).
SHOWN_TOOLS = 12


def _tools(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:SHOWN_TOOLS])
    return shown + (f", … ({len(names) - SHOWN_TOOLS} more)" if len(names) > SHOWN_TOOLS else "")


def mcp_lines(settings: Any, workspace: Path, trust: Any) -> list[str]:
    waiting = [
        e
        for e in (trust.entries if trust is not None and trust.needs_decision else ())
        if getattr(e, "mcp_server", None)
    ]
    lines: list[str] = []
    if not settings.mcp_servers and not waiting:
        return [(f"  {INFO} none configured (`[mcp_servers.NAME]` in config.toml, or `.mcp.json`; see docs/mcp.md)")]
    # Imported only with servers to list: the MCP stack brings the agent's tools (~1 s cold).
    from myrm_tui.mcp.connection import DISABLED, READY
    from myrm_tui.mcp.manager import McpManager

    if settings.mcp_servers:
        manager = McpManager.from_settings(settings, workspace)
        for status in asyncio.run(manager.probe()):
            where = f"{status.transport}, {status.scope}"
            if status.state == READY:
                lines.append(
                    f"  {OK} {status.name} ({where}): started in {status.start_seconds or 0:.2f} s, "
                    f"{len(status.tools)} tool(s): {_tools(status.tools)}"
                )
            elif status.state == DISABLED:
                lines.append(f"  {INFO} {status.name} ({where}): disabled (enabled = false)")
            else:
                lines.append(f"  {BAD} {status.name} ({where}): did not start: {status.last_error}")
                lines.append(f"      runs: {status.summary}")
                if status.log_path is not None:
                    lines.append(f"      its stderr: {status.log_path}")
    for entry in waiting:
        lines.append(
            f"  {INFO} {entry.mcp_server} (workspace): not started, waits for your trust (`myrm trust`): {entry.value}"
        )
    return [for_terminal(line) for line in lines]
