"""One store shared by threads; a second process reading the same workspace (WAL)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from myrm_tui.store import Store, StoreError

WRITES = 300


def test_writer_thread_while_main_thread_reads(store: Store):
    s = store.create_session("m")
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for i in range(WRITES):
                store.append_message(s.id, {"role": "user", "content": f"m{i}"}, tokens=i)
                if i % 50 == 0:
                    store.vault.put(f"artifact {i}")
                    store.append_event(s.id, "note", {"i": i})
        except Exception as exc:  # noqa: BLE001  (re-raised in the main thread's assert)
            errors.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=write)
    worker.start()
    seen = 0
    reads = 0
    while not done.is_set() or reads == 0:
        history = store.messages(s.id)
        assert [r.seq for r in history] == list(range(len(history)))
        assert [r.message["content"] for r in history] == [f"m{i}" for i in range(len(history))]
        assert len(history) >= seen
        if history:
            tail = store.messages_after(s.id, history[-1].id)
            assert all(r.id > history[-1].id for r in tail)
        seen = len(history)
        reads += 1
    worker.join()
    assert errors == []
    assert len(store.messages(s.id)) == WRITES
    assert len(store.events(s.id)) == WRITES // 50


READER = """
import json, sys
from pathlib import Path
from myrm_tui.store import Store, StoreError
store = Store.open(Path(sys.argv[1]), read_only=True)
sid = sys.argv[2]
rows = store.messages(sid)
try:
    store.append_message(sid, {"role": "user", "content": "nope"}, tokens=1)
    refused = False
except StoreError:
    refused = True
print(json.dumps({"contents": [r.message["content"] for r in rows], "refused": refused,
                  "title": store.get_session(sid[:6]).title}))
store.close()
"""


def test_second_process_reads_while_first_holds_it_open(workspace: Path, child_env):
    with Store.open(workspace) as store:
        s = store.create_session("m", "shared")
        for i in range(3):
            store.append_message(s.id, {"role": "user", "content": f"c{i}"}, tokens=1)
        result = subprocess.run(
            [sys.executable, "-c", READER, str(workspace), s.id],
            check=False,
            capture_output=True,
            text=True,
            env=child_env,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        seen = json.loads(result.stdout)
        assert seen == {"contents": ["c0", "c1", "c2"], "refused": True, "title": "shared"}
        # The writer keeps working after the reader came and went.
        store.append_message(s.id, {"role": "user", "content": "c3"}, tokens=1)
        assert len(store.messages(s.id)) == 4


def test_read_only_open_of_missing_store_creates_nothing(workspace: Path):
    with pytest.raises(StoreError, match="no session database"):
        Store.open(workspace, read_only=True)
    assert not (workspace / ".myrm").exists()


def test_read_only_open_after_writer_closed(workspace: Path):
    with Store.open(workspace) as store:
        s = store.create_session("m")
        store.append_message(s.id, {"role": "user", "content": "persisted"}, tokens=1)
    assert not (workspace / ".myrm" / "sessions.db-wal").exists()  # checkpointed on close
    with Store.open(workspace, read_only=True) as viewer:
        assert [r.message["content"] for r in viewer.messages(s.id)] == ["persisted"]
        with pytest.raises(StoreError, match="read-only"):
            viewer.create_session("m")
        with pytest.raises(StoreError, match="read-only"):
            viewer.repair_dangling_tool_calls(s.id)
