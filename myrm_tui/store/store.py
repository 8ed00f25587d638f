"""The session store: one workspace's `.myrm/` folder, `sessions.db` plus the artifact vault.

The message log is the canonical, lossless record of a session: rows are only ever inserted,
each in its own committed transaction before `append_message` returns, so a process killed at
any moment leaves every message it reported as stored, and never half a message. Forks share
their parent's rows by reference (parent id + last shared message id); nothing is copied.

The store knows nothing about prompts or models: messages are opaque JSON dicts, a model is
just a string on the session row.

Every message is also full-text indexed (FTS5, `search_index.py`) in its insert's transaction;
`search` and the recall helpers (`history_message`, `session_artifact`) only ever look at the
session's own history, fork ancestry included.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Self

from myrm_tui.store import context_views, event_kinds, search_index, session_lock, summaries
from myrm_tui.store.constants import (
    ARTIFACT_INDEX_MAX_CHARS,
    ARTIFACTS_DIR,
    BINARY_SNIFF_BYTES,
    DB_NAME,
    DIR_NAME,
    HANDLE_HEX_CHARS,
    INTERRUPTED_TOOL_CONTENT,
    SESSION_ID_BYTES,
)
from myrm_tui.store.db import connect, inserted_id, transaction
from myrm_tui.store.errors import StoreDamagedError, StoreError
from myrm_tui.store.file_checks import refuse_foreign_file, refuse_foreign_schema, refuse_unusable_file
from myrm_tui.store.fresh import create_database
from myrm_tui.store.layout import ensure_layout, restrict_if_present
from myrm_tui.store.records import ArtifactRecord, EventRecord, MessageRecord, SearchHit, SessionRecord
from myrm_tui.store.repair import find_dangling_calls, tool_calls_of
from myrm_tui.store.schema import check_version_read_only, migrate
from myrm_tui.store.search import mentions, visible_artifact_ids_sql
from myrm_tui.store.search import search as search_history
from myrm_tui.store.session_lock import SessionBusyError, StoreLock
from myrm_tui.store.vault import Vault

__all__ = ["SessionBusyError", "Store", "StoreError"]

_SESSION_COLUMNS = "id, title, created_at, updated_at, model, parent_id, fork_message_id"
_MESSAGE_COLUMNS = "id, session_id, seq, role, message_json, tool_call_id, tool_names, tokens, created_at"
_EVENT_COLUMNS = "id, session_id, kind, data_json, created_at"


def _encode_json(value: Any, what: str) -> str:
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


def _session(row: tuple) -> SessionRecord:
    return SessionRecord(
        id=row[0],
        title=row[1],
        created_at=row[2],
        updated_at=row[3],
        model=row[4],
        parent_id=row[5],
        fork_message_id=row[6],
    )


def _decoded(text: Any, what: str) -> Any:
    """A stored JSON column; text that no longer decodes is damage, reported as such."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StoreDamagedError(
            f"{what} does not decode ({exc}); the database is damaged: `myrm sessions recover` "
            "copies what is readable into a new store."
        ) from exc


def _message(row: tuple) -> MessageRecord:
    return MessageRecord(
        id=row[0],
        session_id=row[1],
        seq=row[2],
        role=row[3],
        message=_decoded(row[4], f"message msg:{row[0]}"),
        tool_call_id=row[5],
        tool_names=tuple(_decoded(row[6], f"message msg:{row[0]}")),
        tokens=row[7],
        created_at=row[8],
    )


def _event(row: tuple) -> EventRecord:
    return EventRecord(
        id=row[0], session_id=row[1], kind=row[2], data=_decoded(row[3], f"event {row[0]}"), created_at=row[4]
    )


def _message_index_fields(message: dict[str, Any]) -> tuple[str, str | None, tuple[str, ...]]:
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


class Store:
    """One workspace's `.myrm/` folder: `sessions.db` and the artifact vault.

    Thread-safe: one SQLite connection shared by the asyncio thread and tool worker threads,
    with every operation (reads too, so a read never sees another thread's open transaction)
    serialised by a lock. Another process may open the same folder concurrently (WAL), either
    read-write or with `read_only=True`.

    One writer per session: the first write to a session (or `claim_session`) makes this
    process its writer until `release_sessions` or `close`; another process's writes to it
    raise SessionBusyError (session_lock.py). Forking a session another process is writing
    is allowed: the fork is a new session.
    """

    vault: Vault
    root: Path  # the `.myrm` directory

    def __init__(self, root: Path, conn: sqlite3.Connection, *, read_only: bool, store_lock: StoreLock | None = None):
        """Use `Store.open`; this only wires an already prepared connection."""
        self.root = root
        self.db_path = root / DB_NAME
        self.vault = Vault(root / ARTIFACTS_DIR)
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.RLock()
        self._store_lock = store_lock
        self._claims: set[str] = set()
        # Where stored times come from. `myrm replay` sets a virtual clock so that the times a
        # prompt shows (summary ranges, recall results) are the same on every replay.
        self.clock: Callable[[], float] = time.time

    @classmethod
    def open(cls, workspace_root: Path, *, read_only: bool = False) -> Store:
        """Open (creating and migrating if needed) `<workspace_root>/.myrm/sessions.db`.

        `read_only=True` creates nothing and never writes: for a second process (a viewer,
        `myrm sessions`) looking at a workspace another process is using.
        """
        workspace_root = Path(workspace_root)
        if read_only:
            root = workspace_root / DIR_NAME
            db_path = root / DB_NAME
            if not db_path.is_file():
                raise StoreError(f"no session database at {db_path}; run myrm in {workspace_root} first.")
            refuse_unusable_file(db_path)
            conn = connect(db_path, read_only=True)
            try:
                refuse_foreign_schema(conn, db_path)
                check_version_read_only(conn, db_path)
            except BaseException:
                conn.close()
                raise
            return cls(root, conn, read_only=True)
        try:
            root = ensure_layout(workspace_root)
        except OSError as exc:
            raise StoreError(
                f"cannot create the myrm folder in {workspace_root} ({exc}); check that the "
                "folder exists and is writable."
            ) from exc
        db_path = root / DB_NAME
        store_lock = StoreLock(root)
        store_lock.acquire_shared()  # `sessions recover` must not swap the file under us
        try:
            if db_path.exists():
                refuse_unusable_file(db_path)
                refuse_foreign_file(db_path)
            else:
                create_database(db_path)
            conn = connect(db_path)
        except BaseException:
            store_lock.release()
            raise
        try:
            migrate(conn, db_path)
        except BaseException:
            conn.close()
            store_lock.release()
            raise
        # SQLite creates -wal/-shm with the database file's mode already; chmod anyway so a
        # file left by an older run with a wider mode is tightened too.
        restrict_if_present(db_path.with_name(DB_NAME + "-wal"))
        restrict_if_present(db_path.with_name(DB_NAME + "-shm"))
        return cls(root, conn, read_only=False, store_lock=store_lock)

    def skip_fsync(self) -> None:
        """For a throwaway store (`myrm replay`'s temporary one): commits stop waiting for the
        disk. Never for a workspace: a power loss could then take committed messages with it."""
        with self._lock:
            self._db().execute("PRAGMA synchronous = OFF")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.release_sessions()
            if self._store_lock is not None:
                self._store_lock.release()
                self._store_lock = None

    # one writer per session

    def claim_session(self, session_id: str) -> None:
        """Become the session's writer now (SessionBusyError if another process is), so a
        caller can fork or refuse before the first write rather than fail at it."""
        if self.read_only:
            raise StoreError("this session store was opened read-only; it writes no session.")
        with self._lock:
            if session_id in self._claims:
                return
            session_lock.claim(self.root, session_id)
            self._claims.add(session_id)

    def release_sessions(self, keep: str | None = None) -> None:
        """Let other processes write the sessions this store wrote, except `keep` (e.g. the
        TUI switching to another session). A later write claims again."""
        with self._lock:
            for session_id in sorted(self._claims - {keep}):
                session_lock.release(self.root, session_id)
                self._claims.discard(session_id)

    def session_writer(self, session_id: str) -> int | None:
        """pid of another process writing the session (0 if not yet known), else None."""
        return session_lock.holder(self.root, session_id)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # plumbing

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("the session store is closed; open it again with Store.open().")
        return self._conn

    def _write(self, session_id: str | None = None) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction; naming `session_id` first makes this process its writer."""
        if self.read_only:
            raise StoreError("this session store was opened read-only; open it without read_only to change it.")
        if session_id is not None:
            self.claim_session(session_id)
        return transaction(self._db(), write=True)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Several writes as one transaction (one fsync, all or nothing): a compaction event
        writes its record, views and summary nodes together."""
        with self._lock, self._write():
            yield

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return transaction(self._db(), write=False)

    def _session_row(self, conn: sqlite3.Connection, session_id: str) -> SessionRecord:
        row = conn.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise StoreError(f"no session {session_id!r} in this workspace; list them with `myrm sessions list`.")
        return _session(row)

    def _segments(self, conn: sqlite3.Connection, session_id: str) -> list[tuple[str, int | None]]:
        """(owning session, last visible message id or None for all) for a session and each
        ancestor. History = rows matching any segment, by id: ids grow globally, and a
        session's own rows are always newer than the ancestor rows it shares."""
        segments: list[tuple[str, int | None]] = []
        limit: int | None = None
        current: str | None = session_id
        seen: set[str] = set()
        while current is not None:
            if current in seen:
                raise StoreError(f"session {session_id!r} has a fork cycle; the database is damaged.")
            seen.add(current)
            record = self._session_row(conn, current)
            segments.append((current, limit))
            # The schema sets fork_message_id exactly when parent_id is set (a CHECK).
            if record.fork_message_id is not None:
                fork_at = record.fork_message_id
                limit = fork_at if limit is None else min(limit, fork_at)
            current = record.parent_id
        return segments

    def _history(self, conn: sqlite3.Connection, session_id: str, after_id: int | None = None) -> list[MessageRecord]:
        parts: list[str] = []
        params: list[Any] = []
        for owner, limit in self._segments(conn, session_id):
            clause = f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = ?"
            params.append(owner)
            if limit is not None:
                clause += " AND id <= ?"
                params.append(limit)
            if after_id is not None:
                clause += " AND id > ?"
                params.append(after_id)
            parts.append(clause)
        sql = " UNION ALL ".join(parts) + " ORDER BY id"
        return [_message(row) for row in conn.execute(sql, params)]

    def _insert_message(
        self, conn: sqlite3.Connection, session_id: str, message: dict[str, Any], tokens: int, now: float
    ) -> MessageRecord:
        role, tool_call_id, names = _message_index_fields(message)
        text = _encode_json(message, "message")
        names_json = json.dumps(list(names), ensure_ascii=False)
        touched = conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id)).rowcount
        if touched == 0:
            raise StoreError(f"no session {session_id!r} in this workspace; nothing was stored.")
        seq = conn.execute(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        cursor = conn.execute(
            "INSERT INTO messages (session_id, seq, role, message_json, tool_call_id, tool_names, "
            "tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, seq, role, text, tool_call_id, names_json, int(tokens), now),
        )
        record = MessageRecord(
            id=inserted_id(cursor),
            session_id=session_id,
            seq=seq,
            role=role,
            message=json.loads(text),
            tokens=int(tokens),
            created_at=now,
            tool_call_id=tool_call_id,
            tool_names=names,
        )
        # Same transaction as the insert: a kill leaves the message indexed or not stored.
        search_index.index_message(conn, record)
        return record

    def _insert_event(
        self, conn: sqlite3.Connection, session_id: str, kind: str, data: dict[str, Any], now: float
    ) -> EventRecord:
        text = _encode_json(data, f"{kind!r} event data")
        self._session_row(conn, session_id)
        cursor = conn.execute(
            "INSERT INTO events (session_id, kind, data_json, created_at) VALUES (?, ?, ?, ?)",
            (session_id, kind, text, now),
        )
        return EventRecord(
            id=inserted_id(cursor), session_id=session_id, kind=kind, data=json.loads(text), created_at=now
        )

    def _insert_session(
        self,
        conn: sqlite3.Connection,
        model: str,
        title: str,
        parent_id: str | None = None,
        fork_message_id: int | None = None,
    ) -> SessionRecord:
        now = self.clock()
        while True:
            new_id = secrets.token_hex(SESSION_ID_BYTES)
            clash = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (new_id,)).fetchone()
            if clash is None:
                break
        # Claimed before the row is visible, so no other process can start writing it first.
        self.claim_session(new_id)
        conn.execute(
            f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (new_id, title, now, now, model, parent_id, fork_message_id),
        )
        return SessionRecord(
            id=new_id,
            title=title,
            created_at=now,
            updated_at=now,
            model=model,
            parent_id=parent_id,
            fork_message_id=fork_message_id,
        )

    # sessions

    def create_session(self, model: str, title: str = "") -> SessionRecord:
        with self._lock, self._write() as conn:
            return self._insert_session(conn, model, title)

    def get_session(self, session_id: str) -> SessionRecord:
        """Raises StoreError for an unknown id; accepts a unique id prefix."""
        prefix = (session_id or "").strip().lower()
        if not prefix:
            raise StoreError("no session id given; pass an id or a prefix from `myrm sessions list`.")
        with self._lock, self._read() as conn:
            exact = conn.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (prefix,)).fetchone()
            if exact is not None:
                return _session(exact)
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6",
                (len(prefix), prefix),
            ).fetchall()
        if not rows:
            raise StoreError(f"no session {session_id!r} in this workspace; list them with `myrm sessions list`.")
        if len(rows) > 1:
            shown = ", ".join(row[0] for row in rows[:5])
            raise StoreError(
                f"session id {session_id!r} is ambiguous (matches {shown}"
                f"{', …' if len(rows) > 5 else ''}); type more characters."
            )
        return _session(rows[0])

    def list_sessions(self) -> list[SessionRecord]:
        """Most recently updated first."""
        with self._lock, self._read() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, created_at DESC, id"
            ).fetchall()
        return [_session(row) for row in rows]

    def latest_session(self) -> SessionRecord | None:
        with self._lock, self._read() as conn:
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, created_at DESC, id LIMIT 1"
            ).fetchone()
        return None if row is None else _session(row)

    def rename_session(self, session_id: str, title: str) -> None:
        with self._lock, self._write() as conn:
            self._session_row(conn, session_id)
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

    def set_session_model(self, session_id: str, model: str) -> None:
        with self._lock, self._write(session_id) as conn:
            self._session_row(conn, session_id)
            conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))

    def delete_session(self, session_id: str) -> None:
        """Explicit user action only; refuses a session that has forks.

        Removes the session's own messages and events. Vault artifacts stay: they are shared
        by content hash and other sessions may hold their handles.
        """
        with self._lock, self._write(session_id) as conn:
            self._session_row(conn, session_id)
            children = [
                row[0] for row in conn.execute("SELECT id FROM sessions WHERE parent_id = ? ORDER BY id", (session_id,))
            ]
            if children:
                raise StoreError(
                    f"session {session_id} has forks ({', '.join(children)}) that share its "
                    "messages; delete the forks first."
                )
            conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            for table in ("context_views", "context_synthetic", "context_synthetic_sets", "summaries"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            search_index.forget_session(conn, session_id)
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        with self._lock:  # nothing left to write: let go of the session's lock
            if session_id in self._claims:
                self._claims.discard(session_id)
                session_lock.release(self.root, session_id)

    # context engine views (derived rendering; the messages themselves never change)

    def load_context_views(self, session_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The latest decided view per message and the current synthetic set, as plain dicts."""
        with self._lock, self._read() as conn:
            views, synthetic = context_views.load(conn, session_id)
        view_keys = ("message_id", "event_id", "kind", "message", "tokens", "reason", "handle")
        syn_keys = ("before_id", "kind", "message", "tokens", "event_id", "covers_first", "covers_last", "handle")
        out_views = []
        for row in views:
            item = dict(zip(view_keys, row, strict=True))
            item["message"] = json.loads(item["message"]) if item["message"] is not None else None
            out_views.append(item)
        out_syn = []
        for row in synthetic:
            item = dict(zip(syn_keys, row, strict=True))
            item["message"] = json.loads(item["message"])
            out_syn.append(item)
        return out_views, out_syn

    def save_context_views(
        self, session_id: str, event_id: int, views: list[dict[str, Any]], synthetic: list[dict[str, Any]] | None
    ) -> None:
        """Record views (one transaction); `synthetic`, when given, becomes the current set."""
        view_rows = [
            (
                v["message_id"],
                event_id,
                v["kind"],
                context_views.dumps(v["message"]),
                v["tokens"],
                v.get("reason", ""),
                v.get("handle", ""),
            )
            for v in views
        ]
        syn_rows = (
            None
            if synthetic is None
            else [
                (
                    s["before_id"],
                    s["kind"],
                    context_views.dumps(s["message"]),
                    s["tokens"],
                    s.get("covers_first"),
                    s.get("covers_last"),
                    s.get("handle", ""),
                )
                for s in synthetic
            ]
        )
        with self._lock, self._write(session_id) as conn:
            self._session_row(conn, session_id)
            context_views.save(conn, session_id, event_id, view_rows, syn_rows)

    # summary DAG nodes

    def add_summary(self, session_id: str, node: dict[str, Any]) -> dict[str, Any]:
        """Store a summary node (depth, first_id, last_id, covered_count, children, time_start,
        time_end, tokens, fallback, status, content, rendered, model); returns it with its
        handle `S<n>` (numbered per session)."""
        with self._lock, self._write(session_id) as conn:
            self._session_row(conn, session_id)
            return summaries.insert(conn, session_id, node, self.clock())

    def next_summary_handle(self, session_id: str) -> str:
        """The handle the next `add_summary` of this session will get (to render it with)."""
        with self._lock, self._read() as conn:
            return summaries.next_handle(conn, session_id)

    def summaries(self, session_id: str, status: str | None = None) -> list[dict[str, Any]]:
        with self._lock, self._read() as conn:
            return summaries.select(conn, session_id, status)

    def get_summary(self, session_id: str, handle: str) -> dict[str, Any] | None:
        with self._lock, self._read() as conn:
            return summaries.get(conn, session_id, handle)

    def set_summary_status(self, session_id: str, handle: str, status: str) -> None:
        with self._lock, self._write(session_id) as conn:
            summaries.set_status(conn, session_id, handle, status)

    # messages (append-only)

    def append_message(
        self,
        session_id: str,
        message: dict[str, Any],
        tokens: int,
        *,
        created_at: float | None = None,
        artifacts: Mapping[str, str | None] | None = None,
    ) -> MessageRecord:
        """Insert one message and commit before returning (the row survives a kill -9).
        `created_at` is for replays of recorded sessions (a virtual clock); default: the clock.

        `artifacts` maps each vault handle the message names because its text was put there
        (a spilled tool output, an offloaded image) to that text, or None to read the vault
        file. They are catalogued and indexed in the message's own transaction, so whatever
        leaves the prompt for the vault is searchable the moment its handle is stored, and a
        kill never leaves one without the other. Raises VaultError (nothing stored) for a handle
        the vault does not hold."""
        if not isinstance(message, dict):
            raise StoreError(f"a message must be a dict, got {type(message).__name__}; nothing was stored.")
        now = self.clock() if created_at is None else float(created_at)
        # Read (and hash-check) the vault files before the write lock: indexing a 5 MB log must
        # not hold the database.
        texts = [self._artifact_text(handle, text) for handle, text in (artifacts or {}).items()]
        with self._lock, self._write(session_id) as conn:
            if texts:
                self._session_row(conn, session_id)
            # Linked before the insert: the link's high-water mark is then below the message,
            # so a fork taken at the message sees the artifact its content names.
            for artifact in texts:
                search_index.link_artifact(conn, session_id, artifact, now)
            return self._insert_message(conn, session_id, message, tokens, now)

    def messages(self, session_id: str) -> list[MessageRecord]:
        """The full history of a session, fork ancestry included, oldest first."""
        with self._lock, self._read() as conn:
            return self._history(conn, session_id)

    def messages_after(self, session_id: str, after_id: int) -> list[MessageRecord]:
        """History rows with id > after_id (cheap incremental reads for the engine)."""
        with self._lock, self._read() as conn:
            return self._history(conn, session_id, after_id=after_id)

    def get_message(self, message_id: int) -> MessageRecord:
        with self._lock, self._read() as conn:
            row = conn.execute(f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise StoreError(f"no message msg:{message_id} in this workspace; check the id.")
        return _message(row)

    # events

    def append_event(self, session_id: str, kind: str, data: dict[str, Any]) -> EventRecord:
        with self._lock, self._write(session_id) as conn:
            return self._insert_event(conn, session_id, kind, data, self.clock())

    def events(
        self, session_id: str, kind: str | None = None, limit: int | None = None, *, after_id: int | None = None
    ) -> list[EventRecord]:
        """The session's own events (not its fork ancestors'), oldest first.

        `limit` keeps the most recent `limit` events (still returned oldest first); `after_id`
        only those newer than that event (a reader following the log).
        """
        sql = f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = ?"
        params: list[Any] = [session_id]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        if after_id is not None:
            sql += " AND id > ?"
            params.append(int(after_id))
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, int(limit)))
        with self._lock, self._read() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_event(row) for row in reversed(rows)]

    # forks

    def fork(self, session_id: str, at_message: int | None = None, title: str = "") -> SessionRecord:
        """Child session sharing history up to and including message id `at_message` (default: last)."""
        with self._lock, self._write() as conn:
            parent = self._session_row(conn, session_id)
            history_ids = [record.id for record in self._history(conn, session_id)]
            if not history_ids:
                raise StoreError(
                    f"session {session_id} has no messages yet, so there is nothing to fork; "
                    "start a new session instead."
                )
            if at_message is None:
                at_message = history_ids[-1]
            elif at_message not in set(history_ids):
                raise StoreError(
                    f"message msg:{at_message} is not in the history of session {session_id}; "
                    "fork at one of its messages."
                )
            return self._insert_session(conn, parent.model, title, parent.id, at_message)

    # repair

    def repair_dangling_tool_calls(self, session_id: str) -> list[str]:
        """Answer every tool call of the history that has no result with a synthetic
        "interrupted" tool message (appended); returns the repaired call ids.

        The scan and all repairs are one transaction: two processes resuming the same session
        cannot both answer a call, and a kill leaves either all repairs or none.
        """
        with self._lock, self._write(session_id) as conn:
            history = self._history(conn, session_id)
            dangling = find_dangling_calls(record.message for record in history)
            if not dangling:
                return []
            now = self.clock()
            for call in dangling:
                synthetic = {
                    "role": "tool",
                    "tool_call_id": call.call_id,
                    "name": call.name,
                    "content": INTERRUPTED_TOOL_CONTENT,
                }
                # Rough size estimate (4 chars per token + message overhead); the store stays
                # tokenizer-free, and the engine recounts what it sends anyway.
                tokens = len(INTERRUPTED_TOOL_CONTENT) // 4 + 4
                self._insert_message(conn, session_id, synthetic, tokens, now)
            repaired = [call.call_id for call in dangling]
            self._insert_event(conn, session_id, event_kinds.REPAIR, {"repaired_call_ids": repaired}, now)
            return repaired

    # search and recall

    def search(self, session_id: str, query: str, limit: int = 10) -> list[SearchHit]:
        """Best `limit` hits for `query` among the messages `messages(session_id)` returns and
        the artifacts indexed for that history; [] for an empty query. Any text is a valid
        query (it is never parsed as FTS syntax)."""
        with self._lock, self._read() as conn:
            segments = self._segments(conn, session_id)
            return search_history(conn, segments, query, limit)

    def history_message(self, session_id: str, message_id: int) -> MessageRecord:
        """A message of the session's history (fork ancestry included), else StoreError: a
        handle from another session must not leak its content."""
        with self._lock, self._read() as conn:
            segments = self._segments(conn, session_id)
            row = conn.execute(f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = ?", (int(message_id),)).fetchone()
        if row is not None:
            record = _message(row)
            for owner, limit in segments:
                if record.session_id == owner and (limit is None or record.id <= limit):
                    return record
        raise StoreError(
            f"message msg:{message_id} is not part of session {session_id}'s history; use a handle "
            "from this session (ctx_search lists them)."
        )

    def index_artifact(
        self, session_id: str, handle: str, text: str | None = None, *, at: float | None = None
    ) -> ArtifactRecord:
        """Make a vault artifact searchable from `session_id` (and forks taken after this point).

        `text` is the artifact's text if the caller has it (saves re-reading the file); None
        reads the vault file. Binary artifacts are catalogued but not indexed. Only the first
        ARTIFACT_INDEX_MAX_CHARS characters are indexed. Idempotent. Raises VaultError for a
        bad or unknown handle, StoreError for an unknown session. `at`: the link time (replays
        pass their virtual clock); default now.
        """
        artifact = self._artifact_text(handle, text)
        with self._lock, self._write(session_id) as conn:
            self._session_row(conn, session_id)
            search_index.link_artifact(conn, session_id, artifact, self.clock() if at is None else at)
        return self.session_artifact(session_id, artifact.handle)

    def _artifact_text(self, handle: str, text: str | None) -> search_index.ArtifactText:
        """What indexing `handle` records: its text (given, or read from the vault and checked
        against its hash) unless the catalogue already has this content."""
        path = self.vault.path_of(handle)
        digest = path.name[:64]
        canonical = Vault.HANDLE_PREFIX + digest[:HANDLE_HEX_CHARS]
        size = path.stat().st_size
        with self._lock, self._read() as conn:
            known = conn.execute("SELECT 1 FROM artifacts WHERE digest = ?", (digest,)).fetchone()
        body: str | None = None
        truncated = False
        if known is None:
            if text is not None:
                body, truncated = text[:ARTIFACT_INDEX_MAX_CHARS], len(text) > ARTIFACT_INDEX_MAX_CHARS
            else:
                self.vault.verify(path)  # never index changed bytes as the artifact's text
                body, truncated = _read_artifact_text(path, size)
        return search_index.ArtifactText(digest, canonical, size, body, truncated)

    def session_artifact(self, session_id: str, handle: str) -> ArtifactRecord:
        """A vault artifact the session may read: indexed for its history, or named by one of
        its messages. StoreError otherwise; VaultError for a bad or unknown handle."""
        path = self.vault.path_of(handle)
        digest = path.name[:64]
        canonical = Vault.HANDLE_PREFIX + digest[:HANDLE_HEX_CHARS]
        with self._lock, self._read() as conn:
            segments = self._segments(conn, session_id)
            ids_sql, params = visible_artifact_ids_sql(segments)
            row = conn.execute(
                "SELECT a.size_bytes, a.binary, a.indexed_chars, a.truncated, "
                "(SELECT MIN(l.created_at) FROM artifact_links l WHERE l.artifact_id = a.id) "
                f"FROM artifacts a WHERE a.digest = ? AND a.id IN ({ids_sql})",
                (digest, *params),
            ).fetchone()
            named = row is None and mentions(conn, segments, canonical)
        if row is not None:
            return ArtifactRecord(
                handle=canonical,
                digest=digest,
                size_bytes=row[0],
                binary=bool(row[1]),
                indexed=True,
                indexed_chars=row[2],
                truncated=bool(row[3]),
                linked_at=row[4],
            )
        if named:
            with path.open("rb") as handle_file:
                head = handle_file.read(BINARY_SNIFF_BYTES)
            return ArtifactRecord(
                handle=canonical,
                digest=digest,
                size_bytes=path.stat().st_size,
                binary=b"\0" in head,
                indexed=False,
                indexed_chars=0,
                truncated=False,
                linked_at=None,
            )
        raise StoreError(
            f"{canonical} is not part of session {session_id}: no message of its history names it; "
            "use a handle shown in this session."
        )


def _read_artifact_text(path: Path, size: int) -> tuple[str | None, bool]:
    """(text to index or None if binary, truncated?) of a vault file, reading at most what the
    cap can use (a UTF-8 character is at most 4 bytes)."""
    limit = ARTIFACT_INDEX_MAX_CHARS * 4
    with path.open("rb") as file:
        data = file.read(limit)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None, False
    text = data.decode("utf-8", errors="replace")
    truncated = len(text) > ARTIFACT_INDEX_MAX_CHARS or size > len(data)
    return text[:ARTIFACT_INDEX_MAX_CHARS], truncated
