"""Events: typed records per session, filtered by kind, newest `limit` kept."""

from __future__ import annotations

import pytest

from myrm_tui.store import Store, StoreError, event_kinds


def test_append_list_and_filter(store: Store):
    s = store.create_session("m")
    other = store.create_session("m")
    usage = store.append_event(s.id, event_kinds.USAGE, {"prompt_tokens": 10, "cost": 0.25, "model": "m"})
    store.append_event(s.id, event_kinds.ERROR, {"message": "boom ✗", "hint": None})
    store.append_event(s.id, event_kinds.USAGE, {"prompt_tokens": 20})
    store.append_event(other.id, event_kinds.USAGE, {"prompt_tokens": 99})

    everything = store.events(s.id)
    assert [e.kind for e in everything] == ["usage", "error", "usage"]
    assert everything[0] == usage and everything[0].data["cost"] == 0.25
    assert everything[1].data == {"message": "boom ✗", "hint": None}
    assert [e.data["prompt_tokens"] for e in store.events(s.id, kind=event_kinds.USAGE)] == [10, 20]
    assert [e.data["prompt_tokens"] for e in store.events(s.id, kind="usage", limit=1)] == [20]
    assert [e.kind for e in store.events(s.id, limit=2)] == ["error", "usage"]
    assert store.events(s.id, kind=event_kinds.COMPACTION) == []
    assert [e.data["prompt_tokens"] for e in store.events(other.id)] == [99]


def test_event_for_unknown_session_or_bad_data_is_refused(store: Store):
    with pytest.raises(StoreError, match="no session"):
        store.append_event("0123456789ab", "note", {"text": "x"})
    s = store.create_session("m")
    with pytest.raises(StoreError, match="plain JSON"):
        store.append_event(s.id, "note", {"when": object()})
    assert store.events(s.id) == []


def test_event_kinds_are_stored_as_their_plain_strings(store: Store):
    # The enum must not change what is on disk: readers older than it (and raw SQL) see "usage".
    s = store.create_session("m")
    record = store.append_event(s.id, event_kinds.EventKind.SUMMARY, {"attempts": 1})
    assert type(record.kind) is str and record.kind == "summary"
    row = store._db().execute("SELECT kind FROM events WHERE id = ?", (record.id,)).fetchone()
    assert row == ("summary",)
    assert store.events(s.id, kind="summary") == store.events(s.id, kind=event_kinds.SUMMARY) == [record]
    assert {kind.value for kind in event_kinds.EventKind} >= {"usage", "compaction", "summary", "fork", "undo"}
    assert event_kinds.USAGE is event_kinds.EventKind.USAGE  # the module names are the members
