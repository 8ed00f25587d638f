"""A stored myrm session as the updates `session/load` replays, so the client shows the whole
conversation before the next prompt (the protocol's rule for loading).

Rows are read as stored (provider messages: user, assistant with tool calls, tool results);
tool arguments and results are scrubbed like live ones (updates.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import UserMessageChunk

from myrm_tui.acp.updates import FINISHED_STATUS, Update, tool_kind, tool_locations, tool_title
from myrm_tui.sinks import RUN_ECHO, scrub, scrub_obj
from myrm_tui.store.tool_status import stored_status

if TYPE_CHECKING:
    from myrm_tui.store.records import MessageRecord

HistoryUpdate = Update | UserMessageChunk


def message_text(content: Any) -> str:
    """The text parts of a stored message's content (images and other parts are left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def history_updates(rows: list[MessageRecord], workspace: Path) -> list[HistoryUpdate]:
    updates: list[HistoryUpdate] = []
    for row in rows:
        message = row.message
        text = message_text(message.get("content"))
        if row.role == "user" and text:
            updates.append(update_user_message_text(text))
        elif row.role == "assistant":
            if text:
                updates.append(update_agent_message_text(text))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name = str(function.get("name", "tool"))
                arguments = _arguments(function.get("arguments"))
                updates.append(
                    start_tool_call(
                        str(call.get("id", "")),
                        tool_title(name, arguments),
                        kind=tool_kind(name),
                        status="pending",
                        locations=tool_locations(arguments, workspace),
                        raw_input=scrub_obj(RUN_ECHO, arguments),
                    )
                )
        elif row.role == "tool" and row.tool_call_id:
            ok = stored_status(message) == "ok"  # the stored outcome, not a guess from the text
            updates.append(
                update_tool_call(
                    row.tool_call_id,
                    status=FINISHED_STATUS[ok],
                    content=[tool_content(text_block(scrub(RUN_ECHO, text)))],
                )
            )
    return updates
