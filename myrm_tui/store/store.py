"""The session store: one workspace's `.myrm/` folder, `sessions.db` plus the artifact vault.

The message log is the canonical, lossless record of a session: rows are only ever inserted,
each in its own committed transaction before `append_message` returns, so a process killed at
any moment leaves every message it reported as stored, and never half a message. Forks share
their parent's rows by reference (parent id + last shared message id); nothing is copied.

The store knows nothing about prompts or models: messages are opaque JSON dicts, a model is
just a string on the session row.

Every message is also full-text indexed (FTS5, `search_index.py`) in its insert's transaction;
`search` and the recall helpers (`history_message`, `session_artifact`) look at the session's
own history, fork ancestry included, unless asked for `scope="workspace"`: every session of
this store, which is this workspace's and no other's.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Self

from myrm_tui.store import artifact_access, event_kinds, view_rows
from myrm_tui.store.constants import ARTIFACTS_DIR, DB_NAME, INTERRUPTED_TOOL_CONTENT
from myrm_tui.store.database import context_views, log_sql, search_index, session_lock, summaries
from myrm_tui.store.database.db import transaction
from myrm_tui.store.database.opening import open_read_only, open_read_write
from myrm_tui.store.database.repair import find_dangling_calls
from myrm_tui.store.database.rows import MESSAGE_COLUMNS, SESSION_COLUMNS, message_of, session_of
from myrm_tui.store.database.session_lock import SessionBusyError, StoreLock
from myrm_tui.store.errors import StoreError
from myrm_tui.store.records import ArtifactRecord, EventRecord, MessageRecord, SearchHit, SessionRecord
from myrm_tui.store.search import RecallScope, mentions, visible_for
from myrm_tui.store.search import search as search_history
from myrm_tui.store.vault import Vault

__all__ = ["SessionBusyError", "Store", "StoreError"]


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
        self.vault = Vault(root / ARTIFACTS_DIR, anchor=root.parent)  # below the workspace: never through a link
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
            opened = open_read_only(workspace_root)
            return cls(opened.root, opened.conn, read_only=True)
        opened = open_read_write(workspace_root)
        return cls(opened.root, opened.conn, read_only=False, store_lock=opened.store_lock)

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

    def _insert_session(
        self,
        conn: sqlite3.Connection,
        model: str,
        title: str,
        parent_id: str | None = None,
        fork_message_id: int | None = None,
    ) -> SessionRecord:
        new_id = log_sql.unused_session_id(conn)
        # Claimed before the row is visible, so no other process can start writing it first.
        self.claim_session(new_id)
        return log_sql.insert_session(conn, new_id, model, title, self.clock(), parent_id, fork_message_id)

    # sessions

    def create_session(self, model: str, title: str = "") -> SessionRecord:
        with self._lock, self._write() as conn:
            return self._insert_session(conn, model, title)

    def get_session(self, session_id: str) -> SessionRecord:
        """Raises StoreError for an unknown id; accepts a unique id prefix."""
        with self._lock, self._read() as conn:
            return log_sql.session_by_prefix(conn, session_id)

    def list_sessions(self) -> list[SessionRecord]:
        """Most recently updated first; sessions dated in the future last (log_sql.RECENT_FIRST)."""
        with self._lock, self._read() as conn:
            rows = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions {log_sql.RECENT_FIRST}",
                log_sql.recent_first_bound(self.clock()),
            ).fetchall()
        return [session_of(row) for row in rows]

    def latest_session(self) -> SessionRecord | None:
        """The session `--continue` resumes: the most recently updated one that is not dated in
        the future (a committed `.myrm/sessions.db` could date one in 2099 to be "latest" forever)."""
        with self._lock, self._read() as conn:
            row = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions {log_sql.RECENT_FIRST} LIMIT 1",
                log_sql.recent_first_bound(self.clock()),
            ).fetchone()
        return None if row is None else session_of(row)

    def rename_session(self, session_id: str, title: str) -> None:
        with self._lock, self._write() as conn:
            log_sql.session_row(conn, session_id)
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

    def set_session_model(self, session_id: str, model: str) -> None:
        with self._lock, self._write(session_id) as conn:
            log_sql.session_row(conn, session_id)
            conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))

    def delete_session(self, session_id: str) -> None:
        """Explicit user action only; refuses a session that has forks.

        Removes the session's own messages and events. Vault artifacts stay: they are shared
        by content hash and other sessions may hold their handles.
        """
        with self._lock, self._write(session_id) as conn:
            log_sql.delete_session_rows(conn, session_id)
        with self._lock:  # nothing left to write: let go of the session's lock
            if session_id in self._claims:
                self._claims.discard(session_id)
                session_lock.release(self.root, session_id)

    # context engine views (derived rendering; the messages themselves never change)

    def load_context_views(self, session_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The latest decided view per message and the current synthetic set, as plain dicts."""
        with self._lock, self._read() as conn:
            views, synthetic = context_views.load(conn, session_id)
        return view_rows.as_dicts(views, synthetic)

    def save_context_views(
        self, session_id: str, event_id: int, views: list[dict[str, Any]], synthetic: list[dict[str, Any]] | None
    ) -> None:
        """Record views (one transaction); `synthetic`, when given, becomes the current set."""
        rows = view_rows.view_rows(event_id, views)
        syn_rows = None if synthetic is None else view_rows.synthetic_rows(synthetic)
        with self._lock, self._write(session_id) as conn:
            log_sql.session_row(conn, session_id)
            context_views.save(conn, session_id, event_id, rows, syn_rows)

    # summary DAG nodes

    def add_summary(self, session_id: str, node: dict[str, Any]) -> dict[str, Any]:
        """Store a summary node (depth, first_id, last_id, covered_count, children, time_start,
        time_end, tokens, fallback, status, content, rendered, model); returns it with its
        handle `S<n>` (numbered per session)."""
        with self._lock, self._write(session_id) as conn:
            log_sql.session_row(conn, session_id)
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
                log_sql.session_row(conn, session_id)
            # Linked before the insert: the link's high-water mark is then below the message,
            # so a fork taken at the message sees the artifact its content names.
            for artifact in texts:
                search_index.link_artifact(conn, session_id, artifact, now)
            return log_sql.insert_message(conn, session_id, message, tokens, now)

    def messages(self, session_id: str) -> list[MessageRecord]:
        """The full history of a session, fork ancestry included, oldest first."""
        with self._lock, self._read() as conn:
            return log_sql.history(conn, session_id)

    def messages_after(self, session_id: str, after_id: int) -> list[MessageRecord]:
        """History rows with id > after_id (cheap incremental reads for the engine)."""
        with self._lock, self._read() as conn:
            return log_sql.history(conn, session_id, after_id=after_id)

    def get_message(self, message_id: int) -> MessageRecord:
        with self._lock, self._read() as conn:
            row = conn.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise StoreError(f"no message msg:{message_id} in this workspace; check the id.")
        return message_of(row)

    # events

    def append_event(self, session_id: str, kind: str, data: dict[str, Any]) -> EventRecord:
        with self._lock, self._write(session_id) as conn:
            return log_sql.insert_event(conn, session_id, kind, data, self.clock())

    def events(
        self, session_id: str, kind: str | None = None, limit: int | None = None, *, after_id: int | None = None
    ) -> list[EventRecord]:
        """The session's own events (not its fork ancestors'), oldest first.

        `limit` keeps the most recent `limit` events (still returned oldest first); `after_id`
        only those newer than that event (a reader following the log).
        """
        with self._lock, self._read() as conn:
            return log_sql.select_events(conn, session_id, kind, limit, after_id)

    # forks

    def fork(self, session_id: str, at_message: int | None = None, title: str = "") -> SessionRecord:
        """Child session sharing history up to and including message id `at_message` (default: last)."""
        with self._lock, self._write() as conn:
            parent = log_sql.session_row(conn, session_id)
            history_ids = [record.id for record in log_sql.history(conn, session_id)]
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
            history = log_sql.history(conn, session_id)
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
                log_sql.insert_message(conn, session_id, synthetic, tokens, now)
            repaired = [call.call_id for call in dangling]
            log_sql.insert_event(conn, session_id, event_kinds.REPAIR, {"repaired_call_ids": repaired}, now)
            return repaired

    # search and recall

    def search(
        self, session_id: str, query: str, limit: int = 10, *, scope: RecallScope = "session"
    ) -> list[SearchHit]:
        """Best `limit` hits for `query` among the messages `messages(session_id)` returns and
        the artifacts indexed for that history (every session of the store for "workspace");
        [] for an empty query. Any text is a valid query (it is never parsed as FTS syntax)."""
        with self._lock, self._read() as conn:
            segments = log_sql.segments(conn, session_id)
            return search_history(conn, visible_for(segments, scope), query, limit)

    def history_message(self, session_id: str, message_id: int, *, scope: RecallScope = "session") -> MessageRecord:
        """A message of the session's history (fork ancestry included; any session of this
        store for "workspace"), else StoreError: a handle from elsewhere must not leak."""
        with self._lock, self._read() as conn:
            segments = log_sql.segments(conn, session_id)
            row = conn.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (int(message_id),)).fetchone()
        if row is not None:
            record = message_of(row)
            if scope == "workspace":  # a stored row belongs to a live session of this store
                return record
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
            log_sql.session_row(conn, session_id)
            search_index.link_artifact(conn, session_id, artifact, self.clock() if at is None else at)
        return self.session_artifact(session_id, artifact.handle)

    def _artifact_text(self, handle: str, text: str | None) -> search_index.ArtifactText:
        """What indexing `handle` records (artifact_access.text_to_index); the vault file is read
        outside the lock."""
        found = artifact_access.locate(self.vault, handle)
        with self._lock, self._read() as conn:
            known = artifact_access.catalogued(conn, found.digest)
        return artifact_access.text_to_index(self.vault, found, text, known)

    def session_artifact(self, session_id: str, handle: str, *, scope: RecallScope = "session") -> ArtifactRecord:
        """A vault artifact the session (every session of the store for "workspace") may read:
        indexed for its history, or named by one of its messages. StoreError otherwise;
        VaultError for a bad or unknown handle."""
        found = artifact_access.locate(self.vault, handle)
        with self._lock, self._read() as conn:
            visible = visible_for(log_sql.segments(conn, session_id), scope)
            record = artifact_access.indexed_record(conn, visible, found)
            named = record is None and mentions(conn, visible, found.canonical)
        if record is not None:
            return record
        if named:
            return artifact_access.unindexed_record(self.vault, found)
        raise StoreError(
            f"{found.canonical} is not part of session {session_id}: no message of its history names it; "
            "use a handle shown in this session."
        )
