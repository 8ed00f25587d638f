"""Damaged or unusual stores are reported, recovered, never made worse.

Failing cases first: 4 KB of garbage in the middle of sessions.db (before: `sessions list`
crashed with a traceback and `doctor` said the store opens, exit 0), a 0-byte sessions.db
(before: silently treated as a new store), another program's file, a read-only `.myrm/`
(before: list/show/export opened read-write).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.store import Store, StoreError
from myrm_tui.store.database.db import connect
from tests.faults.store_faults import Myrm, make_workspace
from tests.hypothesis_profiles import examples

PAGE = 4096
SESSIONS = 3
MESSAGES_PER_SESSION = 150


def message(session_no: int, index: int, rng: random.Random) -> dict:
    role = "user" if index % 2 == 0 else "assistant"
    text = "".join(rng.choice("abcdefgh ") for _ in range(600))
    return {"role": role, "content": f"s{session_no} m{index} {text}"}


def populate(workspace: Path) -> dict[int, dict]:
    """A closed (checkpointed) store of 450 ~600-char messages; returns them by message id."""
    rng = random.Random(12)
    written: dict[int, dict] = {}
    with Store.open(workspace) as store:
        for session_no in range(SESSIONS):
            session_id = store.create_session("m", f"session {session_no}").id
            for index in range(MESSAGES_PER_SESSION):
                body = message(session_no, index, rng)
                written[store.append_message(session_id, body, tokens=10).id] = body
    return written


def db_of(workspace: Path) -> Path:
    return workspace / ".myrm" / "sessions.db"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def integrity_ok(db: Path) -> bool:
    raw = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    except sqlite3.DatabaseError:
        return False
    finally:
        raw.close()


def garbage_page(db: Path, page_no: int, seed: int) -> None:
    """Overwrite page `page_no` (1-based, as SQLite counts) with 4 KB of random bytes."""
    with open(db, "r+b") as file:
        file.seek((page_no - 1) * PAGE)
        file.write(random.Random(seed).randbytes(PAGE))


def middle_page_of(db: Path, table: str) -> int:
    raw = sqlite3.connect(db)
    try:
        pages = [
            row[0]
            for row in raw.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,)
            )
        ]
    finally:
        raw.close()
    return pages[len(pages) // 2]


@pytest.fixture
def scripted_env(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "answer one"}, {"text": "answer two"}]}))
    return {"MYRM_MODEL": f"scripted/{script}"}


def run(myrm: Myrm, *args: str, env: dict[str, str] | None = None, prefix: tuple[str, ...] = ()):
    """The real `myrm`; whatever the damage, it never ends in a traceback."""
    result = myrm(*args, prefix=prefix, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.slow
def test_garbage_mid_file_is_reported_then_recovered(tmp_path: Path, scripted_env):
    myrm = make_workspace(tmp_path)
    written = populate(myrm.workspace)
    db = db_of(myrm.workspace)
    damaged_page = middle_page_of(db, "messages")
    garbage_page(db, damaged_page, seed=1)
    assert not integrity_ok(db)
    damaged_sha = sha(db)

    listed = run(myrm, "sessions", "list")
    assert listed.returncode == 1
    assert "damaged" in listed.stderr and "myrm sessions recover" in listed.stderr

    doctor = run(myrm, "doctor", env=scripted_env)
    assert doctor.returncode == 1, doctor.stdout
    assert "is damaged; PRAGMA quick_check says:" in doctor.stdout
    assert "run `myrm sessions recover`" in doctor.stdout
    assert sha(db) == damaged_sha  # diagnosing changed nothing

    recovered = run(myrm, "sessions", "recover")
    assert recovered.returncode == 0, recovered.stderr
    kept = next(db.parent.glob("sessions.db.damaged-*[0-9]"))
    assert sha(kept) == damaged_sha and f"kept as {kept}" in recovered.stdout
    assert integrity_ok(db)
    with Store.open(myrm.workspace, read_only=True) as store:
        rows = [r for s in store.list_sessions() for r in store.messages(s.id)]
    assert all(r.message == written[r.id] for r in rows)  # nothing invented, nothing altered
    lost = len(written) - len(rows)
    # A 4 KB leaf holds a handful of these messages; everything outside that page came back.
    assert 0 < lost <= PAGE // 600 + 1
    assert f"{len(rows)} messages" in recovered.stdout

    assert run(myrm, "sessions", "list").returncode == 0
    assert run(myrm, "doctor", env=scripted_env).returncode == 0
    # The recovered store takes new turns; ids continue after the old ones (never reused).
    turn = run(myrm, "run", "--json", "--continue", "next question", env=scripted_env)
    assert turn.returncode == 0, turn.stderr
    with Store.open(myrm.workspace, read_only=True) as store:
        newest = store.messages(json.loads(turn.stdout)["session_id"])[-2]
    assert newest.message["content"] == "next question" and newest.id > max(written)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, dict[int, dict]]:
    workspace = tmp_path_factory.mktemp("pristine") / "ws"
    workspace.mkdir()
    return workspace, populate(workspace)


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page_fraction=st.floats(min_value=0.0, max_value=0.9999), seed=st.integers(0, 2**32))
def test_any_garbage_page_never_crashes_and_recovery_never_invents(pristine, tmp_path_factory, page_fraction, seed):
    from myrm_tui.store.recovery.health import inspect
    from myrm_tui.store.recovery.recover import recover

    source, written = pristine
    workspace = tmp_path_factory.mktemp("damaged") / "ws"
    shutil.copytree(source, workspace)
    db = db_of(workspace)
    pages = db.stat().st_size // PAGE
    garbage_page(db, 1 + int(page_fraction * pages), seed)
    damaged_sha = sha(db)

    health = inspect(workspace)  # never raises
    if not integrity_ok(db):
        assert not health.healthy  # the bug was "opens fine" while integrity_check failed
    try:
        with Store.open(workspace, read_only=True) as store:
            for session in store.list_sessions():
                store.messages(session.id)
    except StoreError:
        pass  # a clear error is fine; any other exception fails the test
    assert sha(db) == damaged_sha  # reading changed nothing

    try:
        report = recover(workspace)
    except StoreError:
        assert sha(db) == damaged_sha  # refused: the file is left exactly as it was
        return
    assert integrity_ok(db) and sha(report.kept_as) == damaged_sha
    with Store.open(workspace, read_only=True) as store:
        for session in store.list_sessions():
            for record in store.messages(session.id):
                assert record.message == written[record.id]


@pytest.mark.slow
def test_zero_byte_database_is_reported_and_never_replaced(tmp_path: Path, scripted_env):
    myrm = make_workspace(tmp_path)
    folder = myrm.workspace / ".myrm"
    folder.mkdir()
    db = folder / "sessions.db"
    db.touch()
    attempt = run(myrm, "run", "hello", env=scripted_env)
    assert attempt.returncode == 2
    assert "is empty (0 bytes)" in attempt.stderr
    listed = run(myrm, "sessions", "list")
    assert listed.returncode == 1 and "is empty (0 bytes)" in listed.stderr
    doctor = run(myrm, "doctor", env=scripted_env)
    assert doctor.returncode == 1 and "is empty (0 bytes)" in doctor.stdout
    assert db.stat().st_size == 0 and not (folder / "sessions.db-wal").exists()
    # An empty file beside a write-ahead log that holds data: the message says to keep both.
    (folder / "sessions.db-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\0" * 60)
    with pytest.raises(StoreError, match="write-ahead log sessions.db-wal still holds 64 bytes"):
        Store.open(myrm.workspace)
    with pytest.raises(StoreError, match="is empty"):
        Store.open(myrm.workspace, read_only=True)
    assert db.stat().st_size == 0


def test_store_deleted_without_its_wal_is_not_recreated_over_it(tmp_path: Path):
    myrm = make_workspace(tmp_path)
    populate(myrm.workspace)
    folder = myrm.workspace / ".myrm"
    (folder / "sessions.db-wal").write_bytes(b"frames of the deleted database")
    (folder / "sessions.db").unlink()
    with pytest.raises(StoreError, match="exists without sessions.db"):
        Store.open(myrm.workspace)
    assert not (folder / "sessions.db").exists()


@pytest.mark.parametrize("kind", ["other program's sqlite", "not sqlite"])
def test_foreign_file_is_reported_and_left_untouched(tmp_path: Path, scripted_env, kind):
    myrm = make_workspace(tmp_path)
    folder = myrm.workspace / ".myrm"
    folder.mkdir()
    db = folder / "sessions.db"
    if kind == "not sqlite":
        db.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 5000)
        expected = "is not an SQLite file"
    else:
        other = sqlite3.connect(db)
        other.execute("CREATE TABLE users (name TEXT)")
        other.execute("INSERT INTO users VALUES ('alice')")
        other.commit()
        other.close()
        expected = "of another program (tables: users)"
    before = sha(db)
    attempt = run(myrm, "run", "hello", env=scripted_env)
    assert attempt.returncode == 2 and expected in attempt.stderr
    doctor = run(myrm, "doctor", env=scripted_env)
    assert doctor.returncode == 1 and expected in doctor.stdout
    assert run(myrm, "sessions", "list").returncode == 1
    assert sha(db) == before
    assert not (folder / "sessions.db-wal").exists() or (folder / "sessions.db-wal").stat().st_size == 0


def read_only_prefix(folder: Path) -> tuple[tuple[str, ...], str]:
    """A command prefix under which `folder` is really read-only, and how it was done.

    Not root: chmod is enough. Root ignores permission bits, so the folder is bind-mounted
    read-only in a private mount namespace (the kernel then refuses every write, even root's).
    """
    if os.geteuid() != 0:
        folder.chmod(0o500)
        return (), "chmod 0500"
    probe = subprocess.run(
        ["unshare", "--mount", "sh", "-c", f'mount --bind -o ro "{folder}" "{folder}" && ! touch "{folder}/.probe"'],
        capture_output=True,
        check=False,
    )
    assert probe.returncode == 0, (
        "running as root, the read-only test needs `unshare --mount` and a "
        f"bind mount (CAP_SYS_ADMIN): {probe.stderr!r}"
    )
    script = f'mount --bind -o ro "{folder}" "{folder}" && exec "$@"'
    return ("unshare", "--mount", "sh", "-c", script, "sh"), "read-only bind mount"


@pytest.mark.slow
def test_readers_work_on_a_read_only_folder_and_never_write(tmp_path: Path, scripted_env):
    myrm = make_workspace(tmp_path)
    written = populate(myrm.workspace)
    folder = myrm.workspace / ".myrm"
    db = folder / "sessions.db"
    with Store.open(myrm.workspace, read_only=True) as store:
        session = store.list_sessions()[0]
    names_before, sha_before, mtime_before = sorted(os.listdir(folder)), sha(db), db.stat().st_mtime_ns
    prefix, how = read_only_prefix(folder)
    try:
        listed = run(myrm, "sessions", "list", prefix=prefix)
        assert listed.returncode == 0, (how, listed.stderr)
        assert session.id[:12] in listed.stdout and "150" in listed.stdout
        shown = run(myrm, "sessions", "show", session.id[:8], prefix=prefix)
        assert shown.returncode == 0, shown.stderr
        exported = run(myrm, "sessions", "export", session.id, "--format", "json", prefix=prefix)
        assert exported.returncode == 0, exported.stderr
        assert json.loads(exported.stdout)["messages"][0]["message"]["content"].startswith("s2 m0 ")
        doctor = run(myrm, "doctor", prefix=prefix, env=scripted_env)
        assert doctor.returncode == 1, doctor.stdout  # myrm cannot store messages here…
        assert "is read-only" in doctor.stdout and "PRAGMA quick_check ok" in doctor.stdout  # …but reads
        assert "(3 sessions)" in doctor.stdout
    finally:
        folder.chmod(0o700)
    assert sorted(os.listdir(folder)) == names_before
    assert sha(db) == sha_before and db.stat().st_mtime_ns == mtime_before
    assert len(written) == SESSIONS * MESSAGES_PER_SESSION
    # The connection itself refuses writes (mode=ro, not just a query_only flag we could undo).
    conn = connect(db, read_only=True)
    try:
        conn.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO events (session_id, kind, data_json, created_at) VALUES ('x', 'k', '{}', 0)")
    finally:
        conn.close()
