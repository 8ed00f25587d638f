"""The start of every turn, for an agent with MCP servers: wait for servers still starting, put
their current tools into the build, and say so when the list changed.

Why per turn and not per model call: the tool list is part of the prompt prefix that providers
cache; within a turn it must not move. A server that changes its tools mid-turn (or crashes, or
is restarted) changes the list at the next turn, once: the session gets an `mcp_tools` event and
a note naming what was added and removed, so a cache miss is visible and explained, never a
silent per-turn churn (the same tools give the same bytes: mcp/tool.py sorts them). Within a
session the list is frozen (frozen_order.py): a new tool goes last and a removed one stays as a
stub with the same bytes, so what was offered before stays a cached prefix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any

from myrm_tui.agent.events import Notice
from myrm_tui.agent.setup.build import build_agent
from myrm_tui.agent.setup.prompts import offers_tool
from myrm_tui.mcp.connection import CRASHED, FAILED
from myrm_tui.mcp.frozen_order import (
    OFFERED_KEY,
    UNAVAILABLE_KEY,
    frozen_order,
    is_unavailable,
    last_offered,
    schema_bytes,
)
from myrm_tui.mcp.names import PREFIX
from myrm_tui.store import event_kinds

# Names listed in a change note before "and N more" (a server with 80 tools would flood it).
NOTE_NAMES = 8


def _is_mcp(name: str) -> bool:
    return name.startswith(PREFIX) or name == "mcp_read_resource"


def _digest(schemas: list[Any]) -> str:
    text = json.dumps(schemas, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:NOTE_NAMES])
    return shown + (f" and {len(items) - NOTE_NAMES} more" if len(items) > NOTE_NAMES else "")


def change_note(old: list[str], new: list[str], changed: list[str]) -> str:
    parts = []
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    if added:
        parts.append(f"added {_names(added)}")
    if removed:
        parts.append(f"removed {_names(removed)}")
    if changed:
        parts.append(f"schema changed for {_names(changed)}")
    return "MCP tools changed: " + "; ".join(parts) + ". The tool list in the prompt changes once, from this turn on."


async def sync_mcp_tools(agent: Any) -> AsyncIterator[Notice]:
    manager = agent.mcp
    waiting = manager.starting()
    if waiting:
        yield Notice(f"waiting for MCP server(s) {', '.join(waiting)} to start", level="info")
    await manager.wait_started()
    for connection in manager.connections():
        if connection.state in (FAILED, CRASHED) and manager.announce_failure(connection):
            what = "did not start" if connection.state == FAILED else "crashed"
            yield Notice(
                f"MCP server {connection.name} {what}: {connection.last_error}. Its tools cannot run "
                "(a call returns an error); /mcp shows it and can restart it.",
                level="warning",
            )
    tools = manager.tools(trust_read_only_hints=bool(agent.settings.mcp_trust_read_only))
    current = [tool for tool in agent.build.tools if _is_mcp(tool.name)]
    # In the order the session offered them (frozen_order.py): newcomers last, the gone as stubs.
    previous = last_offered(agent.store, agent.session_id)
    tools = frozen_order([t.schema() for t in current] if previous is None else previous, tools)
    # Only what the prompt mode offers (none in `search`), else that mode would rebuild every turn.
    tools = [tool for tool in tools if offers_tool(agent.settings.prompt_mode, tool.name)]
    if schema_bytes(tools) != schema_bytes(current):
        agent.build = build_agent(
            agent.settings, agent.workspace, agent.extra_tools, model=agent.build.model, mcp_tools=tools
        )
    note = _record(agent)
    if note:
        yield Notice(note, level="info")


def _record(agent: Any) -> str | None:
    """Store the offered MCP tools when they differ from what this session last offered; the
    note for the transcript, or None (unchanged, or the first turn of a new session). `tools`
    and `schemas` name the live tools; `offered` is the whole list in prompt order, stubs
    included (frozen_order.py reads it back), and `unavailable` names the stubs."""
    offered = [t for t in agent.build.tools if _is_mcp(t.name)]
    gone = [t.name for t in offered if is_unavailable(t)]
    schemas = [t.schema() for t in offered if not is_unavailable(t)]
    per_tool = {s["function"]["name"]: _digest([s]) for s in schemas}
    names = list(per_tool)
    # A stub has its tool's schema, byte for byte: the digest also covers which tools are stubs.
    digest = _digest([*(t.schema() for t in offered), gone])
    last = agent.store.events(agent.session_id, event_kinds.MCP_TOOLS, limit=1)
    if last and last[-1].data.get("digest") == digest:
        return None
    if not last and not names:
        return None
    agent.store.append_event(
        agent.session_id,
        event_kinds.MCP_TOOLS,
        {
            "tools": names,
            "digest": digest,
            "schemas": per_tool,
            OFFERED_KEY: [t.schema() for t in offered],
            UNAVAILABLE_KEY: gone,
        },
    )
    if not last and len(agent.store.messages(agent.session_id)) <= 1:
        return None  # a new session's first tools are its baseline, not a change
    old = list(last[-1].data.get("tools") or []) if last else []
    old_per_tool = dict(last[-1].data.get("schemas") or {}) if last else {}
    changed = [n for n in names if n in old_per_tool and old_per_tool[n] != per_tool[n]]
    if old == names and not changed:
        return None  # the same tools in the same places (only how the event records them moved)
    note = change_note(old, names, changed)
    agent.store.append_event(agent.session_id, event_kinds.NOTE, {"text": note})
    return note
