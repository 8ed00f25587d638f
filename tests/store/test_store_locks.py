"""An open store keeps SQLite's own locks, so another process reading the workspace (`myrm
sessions`, `myrm doctor`, a second window, a `sqlite3` the model runs) can neither reset the
shared-memory index under it nor delete its write-ahead log.

Why this needs a test: closing any ordinary descriptor of a file drops every POSIX record lock the
process holds on it. The store once opened the database (to pin the inode it checked) and the -shm
(to tighten its mode) and closed them after SQLite had locked them: the next reader from another
process took the index for abandoned, truncated it, and the running session died of SIGBUS on its
next write (`fenced_files.Folder.pin_regular`)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from myrm_tui.fenced_files import open_root
from myrm_tui.store import Store
from tests.store.lock_probe import DB_SHARED, SHM_DMS, lock_seen_from_another_process


def test_an_open_store_holds_sqlites_locks_on_the_database_and_its_index(workspace: Path):
    store = Store.open(workspace)
    try:
        store.create_session("held")
        db = workspace / ".myrm" / "sessions.db"
        assert lock_seen_from_another_process(db, DB_SHARED) == "held", "another process could delete the log"
        shm = db.with_name("sessions.db-shm")
        assert lock_seen_from_another_process(shm, SHM_DMS) == "held", "another process could reset the index"
    finally:
        store.close()


def test_tightening_a_files_mode_keeps_the_locks_held_on_it(tmp_path: Path):
    path = tmp_path / "locked"
    path.write_bytes(b"x" * 16)
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0))
        with open_root(tmp_path) as folder:
            assert folder.restrict("locked", 0o600)
        assert path.stat().st_mode & 0o777 == 0o600
        assert lock_seen_from_another_process(path, (0, 1)) == "held"
    finally:
        os.close(fd)


WRITER = """
import sys, time
from pathlib import Path
from myrm_tui.store import Store
store = Store.open(Path(sys.argv[1]))
session = store.create_session("busy")
print("open", flush=True)
end = time.monotonic() + float(sys.argv[2])
n = 0
while time.monotonic() < end:
    store.append_message(session.id, {"role": "user", "content": "x" * 3000}, tokens=750)
    n += 1
print("wrote", n, flush=True)
store.close()
"""


@pytest.mark.slow  # two processes for a few seconds
def test_a_session_survives_another_process_reading_its_store(workspace: Path, child_env):
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(workspace), "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "open"
    db = workspace / ".myrm" / "sessions.db"
    reads = 0
    while writer.poll() is None:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            conn.execute("SELECT count(*) FROM messages").fetchone()
        finally:
            conn.close()
        reads += 1
        time.sleep(0.01)
    out, err = writer.communicate()
    assert writer.returncode == 0, f"the session died (exit {writer.returncode}) while {reads} reads ran: {err}"
    assert reads > 20
    wrote = int(out.split()[-1])
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == wrote, "every write is there"
    finally:
        conn.close()
