"""The summary DAG's nodes: what stands in the prompt for a run of old history.

Why a table of their own: a summary covers a range of messages (a leaf) or a run of summaries
(a condensed node) and links to them, so `ctx_expand("S12")` walks back down to the originals;
the messages themselves stay untouched. A node's text is written once; only its status moves
(prepared → active → folded), which is why status is the one column that is ever updated.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

STATUSES = ("prepared", "active", "folded", "discarded")
COLUMNS = (
    "handle",
    "seq",
    "depth",
    "first_id",
    "last_id",
    "covered_count",
    "children",
    "time_start",
    "time_end",
    "tokens",
    "fallback",
    "status",
    "content_json",
    "rendered",
    "model",
    "created_at",
)


def create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE summaries (
            session_id    TEXT NOT NULL REFERENCES sessions(id),
            handle        TEXT NOT NULL,
            seq           INTEGER NOT NULL,
            depth         INTEGER NOT NULL,
            first_id      INTEGER NOT NULL,
            last_id       INTEGER NOT NULL,
            covered_count INTEGER NOT NULL,
            children      TEXT NOT NULL DEFAULT '[]',
            time_start    REAL,
            time_end      REAL,
            tokens        INTEGER NOT NULL,
            fallback      INTEGER NOT NULL DEFAULT 0,
            status        TEXT NOT NULL,
            content_json  TEXT NOT NULL,
            rendered      TEXT NOT NULL,
            model         TEXT NOT NULL DEFAULT '',
            created_at    REAL NOT NULL,
            PRIMARY KEY (session_id, handle)
        )
        """
    )
    conn.execute("CREATE INDEX summaries_status ON summaries (session_id, status, seq)")


def _row(row: tuple) -> dict[str, Any]:
    item = dict(zip(COLUMNS, row, strict=True))
    item["children"] = json.loads(item["children"])
    item["fallback"] = bool(item["fallback"])
    item["content"] = json.loads(item.pop("content_json"))
    return item


def _next_seq(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM summaries WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0])  # the row is untyped to mypy; the value is already an int, so int() changes nothing


def next_handle(conn: sqlite3.Connection, session_id: str) -> str:
    return f"S{_next_seq(conn, session_id)}"


def insert(conn: sqlite3.Connection, session_id: str, node: dict[str, Any], now: float) -> dict[str, Any]:
    seq = _next_seq(conn, session_id)
    handle = f"S{seq}"
    status = node.get("status", "active")
    if status not in STATUSES:
        raise ValueError(f"unknown summary status {status!r}")
    values = (
        handle,
        seq,
        int(node["depth"]),
        int(node["first_id"]),
        int(node["last_id"]),
        int(node["covered_count"]),
        json.dumps(list(node.get("children", []))),
        node.get("time_start"),
        node.get("time_end"),
        int(node["tokens"]),
        int(bool(node.get("fallback"))),
        status,
        json.dumps(node.get("content", {}), ensure_ascii=False),
        node["rendered"],
        node.get("model", ""),
        now,
    )
    conn.execute(
        f"INSERT INTO summaries (session_id, {', '.join(COLUMNS)}) VALUES (?{', ?' * len(COLUMNS)})",
        (session_id, *values),
    )
    return _row(values[:12] + (values[12],) + values[13:])


def select(conn: sqlite3.Connection, session_id: str, status: str | None = None) -> list[dict[str, Any]]:
    sql = f"SELECT {', '.join(COLUMNS)} FROM summaries WHERE session_id = ?"
    params: list[Any] = [session_id]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    return [_row(r) for r in conn.execute(sql + " ORDER BY seq", params)]


def get(conn: sqlite3.Connection, session_id: str, handle: str) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM summaries WHERE session_id = ? AND handle = ?", (session_id, handle.upper())
    ).fetchone()
    return _row(row) if row else None


def set_status(conn: sqlite3.Connection, session_id: str, handle: str, status: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"unknown summary status {status!r}")
    conn.execute("UPDATE summaries SET status = ? WHERE session_id = ? AND handle = ?", (status, session_id, handle))
