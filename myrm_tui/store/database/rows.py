"""Rows of the session log as records, and records as rows: the one place that knows the
column lists and how JSON is stored, so the store, its searches and its readers agree."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.store.database.repair import tool_calls_of
from myrm_tui.store.errors import StoreDamagedError, StoreError
from myrm_tui.store.records import EventRecord, MessageRecord, SessionRecord

SESSION_COLUMNS = "id, title, created_at, updated_at, model, parent_id, fork_message_id"
MESSAGE_COLUMNS = "id, session_id, seq, role, message_json, tool_call_id, tool_names, tokens, created_at"
EVENT_COLUMNS = "id, session_id, kind, data_json, created_at"


def encode_json(value: Any, what: str) -> str:
    """Compact JSON text for a row; the dict comes back equal from `json.loads`.

    Non-ASCII stays readable (UTF-8) unless the text holds lone surrogates (e.g. undecodable
    tool output), which SQLite cannot store as UTF-8: then they are \\u-escaped, still exact.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"the {what} is not plain JSON data ({exc}); convert it to dicts, lists, strings "
            "and numbers before storing."
        ) from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def session_of(row: tuple) -> SessionRecord:
    return SessionRecord(
        id=row[0],
        title=row[1],
        created_at=row[2],
        updated_at=row[3],
        model=row[4],
        parent_id=row[5],
        fork_message_id=row[6],
    )


def decoded(text: Any, what: str) -> Any:
    """A stored JSON column; text that no longer decodes is damage, reported as such."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StoreDamagedError(
            f"{what} does not decode ({exc}); the database is damaged: `myrm sessions recover` "
            "copies what is readable into a new store."
        ) from exc


def message_of(row: tuple) -> MessageRecord:
    return MessageRecord(
        id=row[0],
        session_id=row[1],
        seq=row[2],
        role=row[3],
        message=decoded(row[4], f"message msg:{row[0]}"),
        tool_call_id=row[5],
        tool_names=tuple(decoded(row[6], f"message msg:{row[0]}")),
        tokens=row[7],
        created_at=row[8],
    )


def event_of(row: tuple) -> EventRecord:
    return EventRecord(
        id=row[0], session_id=row[1], kind=row[2], data=decoded(row[3], f"event {row[0]}"), created_at=row[4]
    )


def message_index_fields(message: dict[str, Any]) -> tuple[str, str | None, tuple[str, ...]]:
    """role, tool_call_id and tool names, denormalised into columns for cheap queries."""
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise StoreError(
            f"a message needs a string 'role' (user, assistant, tool or system); got {role!r}, nothing was stored."
        )
    tool_call_id = message.get("tool_call_id")
    if not isinstance(tool_call_id, str):
        tool_call_id = None
    if role == "tool":
        name = message.get("name")
        names: tuple[str, ...] = (name,) if isinstance(name, str) and name else ()
    else:
        names = tuple(name for _, name in tool_calls_of(message) if name)
    return role, tool_call_id, names
