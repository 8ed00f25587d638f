"""The searchable (and expandable) text of one stored message, as a pure function.

Search and `ctx_expand` share this rendering on purpose: a line number or a snippet the model
saw in a search hit points at the same line when it expands the message. Only what a person
would look for is included: what was said, which tools were called with which arguments, what
tools returned. Content reads as `messages.content_text` has it (an image is "[image]": its base64
is bytes, not text); reasoning stays out (it is the model's scratchpad, and provider-specific).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from myrm_tui.messages import content_text


def readable_arguments(arguments: Any) -> str:
    """Tool-call arguments as readable JSON text.

    Providers often send arguments with `\\uXXXX` escapes; re-dumping with real characters lets
    a search for Chinese or Cyrillic text find them. Unparsable arguments stay as sent.
    """
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return arguments
        return json.dumps(parsed, ensure_ascii=False)
    if arguments is None:
        return ""
    return json.dumps(arguments, ensure_ascii=False, default=str)


def tool_call_lines(message: Mapping[str, Any]) -> list[str]:
    """One line per tool call of an assistant message: `tool call <name> [<id>]: <arguments>`."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    lines: list[str] = []
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        name = function.get("name") if isinstance(function.get("name"), str) else "?"
        call_id = call.get("id") if isinstance(call.get("id"), str) else ""
        label = f"tool call {name}" + (f" [{call_id}]" if call_id else "")
        lines.append(f"{label}: {readable_arguments(function.get('arguments'))}")
    return lines


def message_search_text(message: Mapping[str, Any]) -> str:
    """Everything searchable in a message, joined by newlines (content first, then calls)."""
    pieces = [content_text(message.get("content"))]
    pieces.extend(tool_call_lines(message))
    return "\n".join(piece for piece in pieces if piece)


def message_tool_label(message: Mapping[str, Any]) -> str | None:
    """The tool a message is about: the tool result's name, or the called names joined."""
    if message.get("role") == "tool":
        name = message.get("name")
        return name if isinstance(name, str) and name else None
    names: list[str] = []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return " ".join(names) or None
