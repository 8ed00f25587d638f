"""Read whatever rows a damaged session database still gives, one table at a time.

Two sources, same interface: SQLite's own `.recover` (the `sqlite3` command-line tool, which
walks every page and rebuilds what it can into a scratch database), or, without that tool, a
scan of the damaged file itself that steps over the rows it cannot read (rowid by rowid past a
damaged page). Either way every row is checked before it is trusted (`valid_row`): a damaged
page can yield garbage that still parses as a row.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from myrm_tui.store.database.summaries import COLUMNS as summary_columns

# The tables recovery copies, parents first, with their columns (the store's schema).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("id", "title", "created_at", "updated_at", "model", "parent_id", "fork_message_id"),
    "messages": (
        "id",
        "session_id",
        "seq",
        "role",
        "message_json",
        "tool_call_id",
        "tool_names",
        "tokens",
        "created_at",
    ),
    "events": ("id", "session_id", "kind", "data_json", "created_at"),
    "context_views": ("session_id", "message_id", "event_id", "kind", "message_json", "tokens", "reason", "handle"),
    "context_synthetic": (
        "session_id",
        "event_id",
        "position",
        "before_id",
        "kind",
        "message_json",
        "tokens",
        "covers_first",
        "covers_last",
        "handle",
    ),
    "context_synthetic_sets": ("session_id", "event_id"),
    # The summaries table is its columns plus the session it belongs to: one list, in summaries.py.
    "summaries": ("session_id", *summary_columns),
    "artifacts": ("id", "digest", "size_bytes", "binary", "indexed_chars", "truncated", "created_at"),
    "artifact_links": ("artifact_id", "session_id", "after_message_id", "created_at"),
}
# After a read error, rowids are probed one by one; this many misses in a row end the table
# (rowids are dense in an append-only log, so a long gap means the end was passed).
PROBE_MISSES_TO_STOP = 5_000
# How long `sqlite3 .recover` may run: it reads every page once, minutes only for huge stores.
CLI_TIMEOUT_S = 600


class CliRecoverError(RuntimeError):
    """`sqlite3 .recover` did not run; the caller falls back to reading the file itself."""


def sqlite_cli() -> str | None:
    return shutil.which("sqlite3")


@dataclass
class TableRead:
    rows: list[tuple]
    unreadable: int = 0  # rowids that raised while reading (at least this many rows lost)


def _json_of(text: object, kind: type | tuple[type, ...]) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return isinstance(json.loads(text), kind)
    except ValueError:
        return False


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def valid_row(table: str, row: tuple) -> bool:
    """Whether a row read from a damaged file can be what the store wrote (types, JSON)."""
    values = dict(zip(TABLE_COLUMNS[table], row, strict=True))
    if table == "sessions":
        return (
            isinstance(values["id"], str)
            and values["id"].isalnum()
            and isinstance(values["model"], str)
            and isinstance(values["title"], str)
            and _is_number(values["created_at"])
            and _is_number(values["updated_at"])
            and (values["parent_id"] is None) == (values["fork_message_id"] is None)
        )
    if table == "messages":
        if not (
            isinstance(values["id"], int)
            and isinstance(values["session_id"], str)
            and isinstance(values["seq"], int)
            and isinstance(values["tokens"], int)
            and _json_of(values["tool_names"], list)
            and _is_number(values["created_at"])
        ):
            return False
        try:
            message = json.loads(values["message_json"])
        except (TypeError, ValueError):
            return False
        return isinstance(message, dict) and message.get("role") == values["role"]
    if table == "events":
        return (
            isinstance(values["id"], int)
            and isinstance(values["session_id"], str)
            and isinstance(values["kind"], str)
            and _json_of(values["data_json"], dict)
        )
    if table == "summaries":
        return _json_of(values["content_json"], (dict, list)) and _json_of(values["children"], list)
    return all(isinstance(values[name], str) for name in ("session_id",) if name in values)


def _columns_sql(table: str) -> str:
    return ", ".join(TABLE_COLUMNS[table])


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    try:
        return (
            conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
            is not None
        )
    except sqlite3.DatabaseError:
        return True  # the catalogue itself is damaged: try the table anyway


def read_table(conn: sqlite3.Connection, table: str) -> TableRead:
    """Every row of `table` that can be read, in rowid order; a damaged stretch is stepped over
    rowid by rowid."""
    result = TableRead(rows=[])
    if not _has_table(conn, table):
        return result
    columns = _columns_sql(table)
    last = 0
    try:
        for row in conn.execute(f"SELECT rowid, {columns} FROM {table} ORDER BY rowid"):
            last = row[0]
            result.rows.append(tuple(row[1:]))
        return result
    except sqlite3.DatabaseError:
        pass
    rowid, misses = last + 1, 0
    while misses < PROBE_MISSES_TO_STOP:
        try:
            row = conn.execute(f"SELECT {columns} FROM {table} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            result.unreadable += 1
            misses += 1
        else:
            if row is None:
                misses += 1
            else:
                result.rows.append(tuple(row))
                misses = 0
        rowid += 1
    return result


def high_water(conn: sqlite3.Connection) -> dict[str, int]:
    """The AUTOINCREMENT counters (ids never reused), as far as they can still be read."""
    try:
        return {str(name): int(seq) for name, seq in conn.execute("SELECT name, seq FROM sqlite_sequence")}
    except sqlite3.DatabaseError:
        return {}


def open_damaged(db_path: Path) -> sqlite3.Connection:
    """A read-only connection to the damaged file (its write-ahead log applied if present)."""
    conn = sqlite3.connect(f"file:{quote(str(db_path))}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = ON")
    return conn


def recover_with_cli(db_path: Path, scratch: Path) -> int:
    """`sqlite3 DB .recover | sqlite3 SCRATCH`; returns the rows `.recover` could not place in
    any table (its lost_and_found)."""
    cli = sqlite_cli()
    assert cli is not None
    dump = subprocess.run(
        [cli, "-readonly", str(db_path), ".recover"], capture_output=True, timeout=CLI_TIMEOUT_S, check=False
    )
    if dump.returncode != 0 or b"sql error" in dump.stderr:
        # e.g. a build without the sqlite_dbpage table `.recover` reads pages through: its
        # output is then a bare header, and trusting it would "recover" an empty store.
        raise CliRecoverError(f"sqlite3 .recover failed: {dump.stderr.decode(errors='replace').strip()}")
    load = subprocess.run(
        [cli, str(scratch)], input=dump.stdout, capture_output=True, timeout=CLI_TIMEOUT_S, check=False
    )
    if load.returncode != 0 and not scratch.exists():
        raise CliRecoverError(f"loading the recovered rows failed: {load.stderr.decode(errors='replace').strip()}")
    conn = sqlite3.connect(scratch)
    try:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'lost_and_found%'"
            )
        ]
        return sum(int(conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]) for name in names)
    except sqlite3.DatabaseError:
        return 0
    finally:
        conn.close()


def artifact_texts(conn: sqlite3.Connection) -> Iterator[tuple[int, str]]:
    """(artifact id, indexed text) rows of the old word index that can still be read."""
    try:
        yield from conn.execute("SELECT rowid, text FROM artifacts_fts ORDER BY rowid")
    except sqlite3.DatabaseError:
        return
