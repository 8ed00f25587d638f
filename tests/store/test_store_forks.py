"""Forks share the parent's history by reference, up to the fork point, never copying rows."""

from __future__ import annotations

import sqlite3

import pytest

from myrm_tui.store import Store, StoreError


def _say(store: Store, session_id: str, text: str) -> int:
    return store.append_message(session_id, {"role": "user", "content": text}, tokens=1).id


def _texts(store: Store, session_id: str) -> list[str]:
    return [r.message["content"] for r in store.messages(session_id)]


def _row_count(store: Store) -> int:
    raw = sqlite3.connect(store.db_path)
    try:
        return raw.execute("SELECT count(*) FROM messages").fetchone()[0]
    finally:
        raw.close()


def test_child_sees_parent_prefix_only(store: Store):
    parent = store.create_session("m", "root")
    ids = [_say(store, parent.id, f"p{i}") for i in range(4)]
    child = store.fork(parent.id, at_message=ids[1], title="branch")
    assert (child.parent_id, child.fork_message_id, child.model) == (parent.id, ids[1], "m")

    _say(store, parent.id, "p-late")
    _say(store, child.id, "c0")
    assert _texts(store, child.id) == ["p0", "p1", "c0"]
    assert _texts(store, parent.id) == ["p0", "p1", "p2", "p3", "p-late"]
    own = store.messages(child.id)[-1]
    assert (own.session_id, own.seq) == (child.id, 0)
    assert [r.session_id for r in store.messages(child.id)[:2]] == [parent.id, parent.id]
    assert _row_count(store) == 6  # 5 parent rows + 1 child row: nothing copied


def test_default_fork_point_is_last_message(store: Store):
    parent = store.create_session("m")
    ids = [_say(store, parent.id, f"p{i}") for i in range(3)]
    child = store.fork(parent.id)
    assert child.fork_message_id == ids[-1]
    _say(store, parent.id, "after fork")
    assert _texts(store, child.id) == ["p0", "p1", "p2"]


def test_fork_of_fork(store: Store):
    root = store.create_session("m")
    r = [_say(store, root.id, f"r{i}") for i in range(3)]
    child = store.fork(root.id, at_message=r[1])
    c = [_say(store, child.id, f"c{i}") for i in range(2)]
    grandchild = store.fork(child.id, at_message=c[0])
    _say(store, grandchild.id, "g0")
    _say(store, child.id, "c-late")
    _say(store, root.id, "r-late")
    assert _texts(store, grandchild.id) == ["r0", "r1", "c0", "g0"]
    assert _texts(store, child.id) == ["r0", "r1", "c0", "c1", "c-late"]
    # Forking the grandchild at a row owned by the root (shared through two levels) works too.
    deep = store.fork(grandchild.id, at_message=r[0])
    assert _texts(store, deep.id) == ["r0"]
    assert [r.id for r in store.messages_after(grandchild.id, r[1])] == [
        m.id for m in store.messages(grandchild.id)[2:]
    ]
    assert _row_count(store) == 3 + 2 + 1 + 2


def test_fork_at_message_outside_history_is_refused(store: Store):
    parent = store.create_session("m")
    p = [_say(store, parent.id, f"p{i}") for i in range(3)]
    child = store.fork(parent.id, at_message=p[0])
    other = store.create_session("m")
    o = _say(store, other.id, "elsewhere")
    with pytest.raises(StoreError, match="not in the history"):
        store.fork(parent.id, at_message=o)
    # p[2] exists in the parent but is after the child's fork point: not the child's history.
    with pytest.raises(StoreError, match="not in the history"):
        store.fork(child.id, at_message=p[2])
    with pytest.raises(StoreError, match="not in the history"):
        store.fork(parent.id, at_message=999_999)
    with pytest.raises(StoreError, match="nothing to fork"):
        store.fork(store.create_session("m").id)
    with pytest.raises(StoreError, match="no session"):
        store.fork("abcdefabcdef")
    assert [s.id for s in store.list_sessions() if s.parent_id == parent.id] == [child.id]
