"""kill -9 at random moments never corrupts the log nor loses a message reported as stored."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from myrm_tui.store import Store

KILLS = 15


def _spawn(writer: ModuleType, workspace: Path, session_id: str, env: dict[str, str]) -> subprocess.Popen:
    assert writer.__file__ is not None
    return subprocess.Popen(
        [sys.executable, writer.__file__, str(workspace), session_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )


def _check_database(db: Path, session_id: str, make_message, from_seq: int = 0) -> int:
    """Integrity, contiguous seq, exact content by index for rows from `from_seq` on (earlier
    rows were checked after an earlier kill); returns the row count."""
    raw = sqlite3.connect(db)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        seqs = [r[0] for r in raw.execute("SELECT seq FROM messages WHERE session_id = ? ORDER BY id", (session_id,))]
        rows = raw.execute(
            "SELECT seq, message_json, tokens FROM messages WHERE session_id = ? AND seq >= ? ORDER BY id",
            (session_id, from_seq),
        ).fetchall()
    finally:
        raw.close()
    assert seqs == list(range(len(seqs)))
    for seq, text, tokens in rows:
        assert json.loads(text) == make_message(seq), f"row seq={seq} differs from what was written"
        assert tokens == seq
    return len(seqs)


@pytest.mark.slow
def test_sigkill_at_random_times_leaves_a_sound_log(workspace: Path, kill_writer: ModuleType, child_env):
    writer = kill_writer
    with Store.open(workspace) as store:
        session_id = store.create_session("m", "kill target").id
    db = workspace / ".myrm" / "sessions.db"
    rng = random.Random(1234)
    reported_max = -1
    rows = 0
    for attempt in range(KILLS):
        proc = _spawn(writer, workspace, session_id, child_env)
        early: list[str] = []
        try:
            if attempt % 4 == 0:
                # Sometimes kill without waiting: during interpreter start, open or first append.
                time.sleep(rng.uniform(0.0, 0.12))
            else:
                assert proc.stdout is not None and proc.stderr is not None
                assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
                # Let a few appends through first (counted, not timed: on a loaded box a timed
                # wait let too few through for the test to reach kills mid-write), then kill at a
                # random moment while the writer goes on appending.
                early = [proc.stdout.readline() for _ in range(rng.randint(0, 6))]
                time.sleep(rng.uniform(0.0, 0.12))
        finally:
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, err
        reported = [int(line) for line in "".join(early).split() + out.split() if line.isdigit()]
        rows = _check_database(db, session_id, writer.make_message, from_seq=max(0, rows - 1))
        # Every append that returned before the kill is in the database.
        if reported:
            reported_max = max(reported_max, max(reported))
        assert rows > reported_max, f"message seq {reported_max} was reported stored but is missing"
        # The next writer resumes from the surviving rows; the store must open after any kill.
        with Store.open(workspace) as store:
            assert len(store.messages(session_id)) == rows
    assert reported_max >= 20, "the writer barely wrote anything; the test did not exercise kills mid-write"
    _check_database(db, session_id, writer.make_message)
    with Store.open(workspace) as store:
        history = store.messages(session_id)
    big = [r for r in history if r.role == "tool"]
    assert big and all(len(r.message["content"]) == writer.BIG_CHARS for r in big)
    assert any(r.tool_names == ("tool_0", "tool_1") for r in history)
