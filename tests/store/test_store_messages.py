"""Sessions and the append-only message log: what goes in comes back exactly, in order."""

from __future__ import annotations

import sqlite3

import pytest

from myrm_tui.store import Store, StoreError

NESTED = {
    "role": "assistant",
    "content": 'Grüße, 世界 — naïve café 🚀 \u2028 tab\tquote" backslash\\',
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "file_read", "arguments": '{"path": "ä/b.py", "lines": [1, 2]}'},
        }
    ],
    "extra": {"deep": [[1, 2.5, -3e-7], {"k": None, "t": True, "f": False}], "empty": {}, "": ""},
}


def test_append_and_read_round_trip_exactly(store: Store):
    session = store.create_session("gpt-x", "first")
    first = store.append_message(session.id, {"role": "user", "content": "hello"}, tokens=5)
    second = store.append_message(session.id, NESTED, tokens=42)

    history = store.messages(session.id)
    assert [r.id for r in history] == [first.id, second.id]
    assert [r.seq for r in history] == [0, 1]
    assert history[1].message == NESTED
    assert history[1].tokens == 42 and history[0].tokens == 5
    assert history[1].role == "assistant"
    assert history[1].tool_names == ("file_read",)
    assert history[1] == second
    assert store.get_message(second.id) == second
    # A second, independent connection reads the same committed bytes.
    store.close()
    with Store.open(store.root.parent) as again:
        assert again.messages(session.id)[1].message == NESTED


def test_key_order_and_lone_surrogates_survive(store: Store):
    session = store.create_session("m")
    message = {
        "role": "tool",
        "tool_call_id": "c9",
        "name": "bash",
        "z": 1,
        "a": 2,
        "content": "undecodable byte: \udcff end",
    }
    store.append_message(session.id, message, tokens=1)
    (row,) = store.messages(session.id)
    assert row.message == message
    assert list(row.message) == list(message)
    assert row.tool_call_id == "c9" and row.tool_names == ("bash",)


def test_seq_is_per_session_and_ids_are_global(store: Store):
    a = store.create_session("m")
    b = store.create_session("m")
    for i in range(3):
        store.append_message(a.id, {"role": "user", "content": f"a{i}"}, tokens=1)
        store.append_message(b.id, {"role": "user", "content": f"b{i}"}, tokens=1)
    rows_a, rows_b = store.messages(a.id), store.messages(b.id)
    assert [r.seq for r in rows_a] == [0, 1, 2]
    assert [r.seq for r in rows_b] == [0, 1, 2]
    assert [r.message["content"] for r in rows_a] == ["a0", "a1", "a2"]
    all_ids = [r.id for r in rows_a + rows_b]
    assert len(set(all_ids)) == 6
    assert [r.id for r in rows_a] == sorted(r.id for r in rows_a)


def test_messages_after_returns_only_newer_rows(store: Store):
    s = store.create_session("m")
    ids = [store.append_message(s.id, {"role": "user", "content": str(i)}, tokens=1).id for i in range(5)]
    assert [r.id for r in store.messages_after(s.id, ids[2])] == ids[3:]
    assert store.messages_after(s.id, ids[-1]) == []
    assert [r.id for r in store.messages_after(s.id, 0)] == ids


def test_append_updates_session_and_list_order(store: Store):
    old = store.create_session("m", "old")
    new = store.create_session("m", "new")
    assert store.list_sessions()[0].id == new.id
    store.append_message(old.id, {"role": "user", "content": "bump"}, tokens=1)
    assert store.get_session(old.id).updated_at > old.updated_at
    assert [s.id for s in store.list_sessions()] == [old.id, new.id]
    latest = store.latest_session()
    assert latest is not None and latest.id == old.id


def test_bad_messages_are_refused_and_store_nothing(store: Store):
    s = store.create_session("m")
    with pytest.raises(StoreError, match="role"):
        store.append_message(s.id, {"content": "no role"}, tokens=1)
    with pytest.raises(StoreError, match="plain JSON"):
        store.append_message(s.id, {"role": "user", "content": {1, 2}}, tokens=1)
    with pytest.raises(StoreError, match="no session"):
        store.append_message("ffffffffffff", {"role": "user", "content": "x"}, tokens=1)
    assert store.messages(s.id) == []
    count = sqlite3.connect(store.db_path).execute("SELECT count(*) FROM messages").fetchone()[0]
    assert count == 0


def test_messages_cannot_be_updated(store: Store):
    s = store.create_session("m")
    store.append_message(s.id, {"role": "user", "content": "keep me"}, tokens=1)
    raw = sqlite3.connect(store.db_path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute("UPDATE messages SET message_json = '{}'")
    raw.close()
    assert store.messages(s.id)[0].message["content"] == "keep me"


def test_session_ids_prefix_lookup(store: Store):
    sessions = [store.create_session("m", f"s{i}") for i in range(40)]
    for s in sessions:
        assert len(s.id) == 12 and int(s.id, 16) >= 0
        assert store.get_session(s.id[:8]) == s
        assert store.get_session(s.id.upper()) == s
    by_first: dict[str, list[str]] = {}
    for s in sessions:
        by_first.setdefault(s.id[0], []).append(s.id)
    shared = next(k for k, ids in by_first.items() if len(ids) > 1)  # 40 ids, 16 letters
    with pytest.raises(StoreError, match="ambiguous"):
        store.get_session(shared)
    known = {s.id for s in sessions}
    missing = next(f"{n:012x}" for n in range(100) if f"{n:012x}" not in known)
    with pytest.raises(StoreError, match="no session"):
        store.get_session(missing)
    with pytest.raises(StoreError, match="no session id"):
        store.get_session("")


def test_rename_and_model_switch(store: Store):
    s = store.create_session("small", "draft")
    store.rename_session(s.id, "final title")
    store.set_session_model(s.id, "big")
    got = store.get_session(s.id)
    assert (got.title, got.model) == ("final title", "big")
    with pytest.raises(StoreError):
        store.rename_session("000000000000", "x")


def test_delete_session_removes_rows_but_refuses_with_forks(store: Store):
    parent = store.create_session("m")
    store.append_message(parent.id, {"role": "user", "content": "p"}, tokens=1)
    store.append_event(parent.id, "note", {"text": "hi"})
    child = store.fork(parent.id)
    with pytest.raises(StoreError, match="forks"):
        store.delete_session(parent.id)
    assert len(store.messages(child.id)) == 1  # refusal changed nothing
    store.delete_session(child.id)
    store.delete_session(parent.id)
    with pytest.raises(StoreError):
        store.get_session(parent.id)
    raw = sqlite3.connect(store.db_path)
    assert raw.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    assert raw.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    raw.close()


def test_closed_store_says_so(workspace):
    s = Store.open(workspace)
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        s.list_sessions()
