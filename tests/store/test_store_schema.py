"""Schema versioning: forward migrations in one transaction, refusal of newer files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from myrm_tui.store import Store, StoreError
from myrm_tui.store.database import schema


def _version(db: Path) -> int:
    raw = sqlite3.connect(db)
    try:
        return raw.execute("PRAGMA user_version").fetchone()[0]
    finally:
        raw.close()


def _tables(db: Path) -> set[str]:
    raw = sqlite3.connect(db)
    try:
        return {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        raw.close()


def test_empty_database_migrates_to_latest(workspace: Path):
    (workspace / ".myrm").mkdir()
    db = workspace / ".myrm" / "sessions.db"
    raw = sqlite3.connect(db)  # a valid, empty database at user_version 0 (with a header page:
    raw.execute("CREATE TABLE scratch (x)")  # a 0-byte file is refused as damage)
    raw.execute("DROP TABLE scratch")
    raw.close()
    assert db.stat().st_size > 0 and _version(db) == 0
    with Store.open(workspace) as store:
        s = store.create_session("m")
        store.append_message(s.id, {"role": "user", "content": "x"}, tokens=1)
    assert _version(db) == schema.latest_version() >= 1
    assert {"sessions", "messages", "events"} <= _tables(db)
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    indexes = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    raw.close()
    assert {"messages_session_id", "events_session_kind"} <= indexes


def test_reopen_is_idempotent_and_new_steps_run_once(workspace: Path, monkeypatch):
    with Store.open(workspace) as store:
        s = store.create_session("m", "kept")
        store.append_message(s.id, {"role": "user", "content": "still here"}, tokens=1)
    db = workspace / ".myrm" / "sessions.db"
    base = schema.latest_version()

    runs: list[int] = []

    def add_notes_table(conn: sqlite3.Connection) -> None:
        runs.append(1)
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_notes_table])
    for _ in range(3):
        with Store.open(workspace) as store:
            assert store.get_session(s.id).title == "kept"
            assert store.messages(s.id)[0].message["content"] == "still here"
    assert runs == [1]
    assert _version(db) == base + 1
    assert "notes" in _tables(db)


def test_failing_migration_rolls_back_completely(workspace: Path, monkeypatch):
    Store.open(workspace).close()
    db = workspace / ".myrm" / "sessions.db"
    before = _version(db)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration bug")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, broken])
    with pytest.raises(RuntimeError, match="migration bug"):
        Store.open(workspace)
    assert _version(db) == before
    assert "half_done" not in _tables(db)


def test_future_version_is_a_clear_error(workspace: Path):
    Store.open(workspace).close()
    db = workspace / ".myrm" / "sessions.db"
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StoreError, match="newer than this myrm.*upgrade myrm"):
        Store.open(workspace)
    with pytest.raises(StoreError, match="newer than this myrm"):
        Store.open(workspace, read_only=True)
    assert _version(db) == 99  # refused without touching it


def test_garbage_file_is_a_clear_error(workspace: Path):
    (workspace / ".myrm").mkdir()
    (workspace / ".myrm" / "sessions.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a readable myrm session database"):
        Store.open(workspace)
