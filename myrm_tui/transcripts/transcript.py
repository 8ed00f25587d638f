"""Render a stored session for people (plain text, Markdown) or programs (JSON).

The texts for people end on a terminal (`sessions show`, an export someone `cat`s), so their
control characters are shown as escapes (terminal_text); the JSON keeps every byte.

Stored messages are provider dicts (OpenAI shape, as litellm sends them): `content` may be a
string, None, or a list of parts; assistant tool calls carry their arguments as a JSON string.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterable
from typing import Any

from myrm_tui.messages import content_text
from myrm_tui.store.records import MessageRecord, SessionRecord
from myrm_tui.terminal_text import for_terminal


def tool_calls_of(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(id, name, pretty arguments) of an assistant message's tool calls."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        raw = function.get("arguments", "")
        try:
            pretty = json.dumps(json.loads(raw) if isinstance(raw, str) else raw, indent=2, ensure_ascii=False)
        except (json.JSONDecodeError, TypeError):
            pretty = str(raw)
        calls.append((str(call.get("id", "")), str(function.get("name", "?")), pretty))
    return calls


def _tool_name(record: MessageRecord, names: dict[str, str]) -> str:
    """A tool result's tool name: its own `name`, else the name of the call it answers."""
    return str(record.message.get("name") or names.get(record.tool_call_id or "", "") or "tool")


def stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def render_text(session: SessionRecord, messages: Iterable[MessageRecord]) -> str:
    out = [f"session {session.id}  {session.title}", f"model {session.model}  created {stamp(session.created_at)}"]
    names: dict[str, str] = {}
    for record in messages:
        message = record.message
        header = record.role
        if record.role == "tool":
            header = f"tool result {_tool_name(record, names)} [{record.tool_call_id or ''}]"
        out.append("")
        out.append(f"── {header} (msg:{record.id}) ──")
        text = content_text(message.get("content"))
        if text:
            out.append(text)
        for call_id, name, arguments in tool_calls_of(message):
            names[call_id] = name
            out.append(f"→ tool call {name} [{call_id}]")
            out.append(arguments)
    return for_terminal("\n".join(out) + "\n")


def _fence(text: str, lang: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside, so it cannot break."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def render_markdown(session: SessionRecord, messages: Iterable[MessageRecord]) -> str:
    out = [
        f"# {session.title or 'Untitled session'}",
        "",
        f"- session: `{session.id}`",
        f"- model: `{session.model}`",
        f"- created: {stamp(session.created_at)}, updated: {stamp(session.updated_at)}",
    ]
    if session.parent_id:
        out.append(f"- forked from `{session.parent_id}` at message {session.fork_message_id}")
    titles = {"user": "User", "assistant": "Assistant", "system": "System"}
    names: dict[str, str] = {}
    for record in messages:
        message = record.message
        text = content_text(message.get("content"))
        out.append("")
        if record.role == "tool":
            out.append(f"### Tool result: {_tool_name(record, names)} (`{record.tool_call_id or ''}`)")
            out.append("")
            out.append(_fence(text))
            continue
        out.append(f"## {titles.get(record.role, record.role.title())}")
        if text:
            out.append("")
            out.append(text)
        for call_id, name, arguments in tool_calls_of(message):
            names[call_id] = name
            out.append("")
            out.append(f"**Tool call:** `{name}` (`{call_id}`)")
            out.append("")
            out.append(_fence(arguments, "json"))
    return for_terminal("\n".join(out) + "\n")


def export_json(session: SessionRecord, messages: Iterable[MessageRecord]) -> dict[str, Any]:
    """Session metadata plus every message row exactly as stored."""
    return {
        "session": dataclasses.asdict(session),
        "messages": [{**dataclasses.asdict(record), "tool_names": list(record.tool_names)} for record in messages],
    }
