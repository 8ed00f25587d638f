"""The ring's incremental reader gives what a fresh read gives, however the events arrive."""

from __future__ import annotations

from typing import Any, cast

from myrm_tui.store import Store
from myrm_tui.store.records import EventRecord
from myrm_tui.tui.figures.context_source import ContextFollower, read_context

BUDGET = {"window": 10_000, "output_reserve": 1_000, "safety_margin": 256, "prompt_limit": 8_744}


def assemble(tokens: int) -> dict[str, Any]:
    return {"tokens": tokens, "budget": BUDGET, "ladder": {"tier": None}}


def usage(tokens: int, cost: float | None = 0.01) -> dict[str, Any]:
    return {"prompt_tokens": tokens, "completion_tokens": 10, "cached_read_tokens": 5, "cost": cost}


def test_follower_matches_fresh_reads_call_by_call(tmp_path) -> None:
    store = Store.open(tmp_path)
    sid = store.create_session("m", "t").id
    follower = ContextFollower()
    assert follower.read(store, sid) == read_context(store, sid)
    for i in range(6):
        store.append_event(sid, "assemble", assemble(1_000 + i))
        assert follower.read(store, sid) == read_context(store, sid)
        store.append_event(sid, "usage", usage(1_100 + i, cost=None if i == 2 else 0.01))
        if i == 3:
            store.append_event(sid, "compaction", {"state": "started"})
            store.append_event(sid, "compaction", {"state": "done", "tokens_after": 500, "tier": "full"})
        state = follower.read(store, sid)
        assert state == read_context(store, sid)
    assert state.spend.calls == 6
    assert state.reading.used == 1_105
    store.close()


def test_follower_switching_sessions_starts_over(tmp_path) -> None:
    store = Store.open(tmp_path)
    first, second = (store.create_session("m", name).id for name in ("a", "b"))
    store.append_event(first, "assemble", assemble(2_000))
    store.append_event(first, "usage", usage(2_100))
    follower = ContextFollower()
    assert follower.read(store, first).reading.used == 2_100
    assert follower.read(store, second) == read_context(store, second)
    assert follower.read(store, first) == read_context(store, first)
    store.close()


class LateStore:
    """A store whose per-kind reads miss one event that the next read returns: what the agent
    thread writing between the follower's queries looks like."""

    def __init__(self, store: Store, hide_id: int) -> None:
        self.store, self.hide_id, self.hidden_once = store, hide_id, False

    def events(
        self, session_id: str, kind: str | None = None, limit: int | None = None, **kw: Any
    ) -> list[EventRecord]:
        found = self.store.events(session_id, kind, limit, **kw)
        if not self.hidden_once and any(e.id == self.hide_id for e in found):
            self.hidden_once = True
            return [e for e in found if e.id != self.hide_id]
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_an_event_seen_one_read_late_is_still_put_in_order(tmp_path) -> None:
    store = Store.open(tmp_path)
    sid = store.create_session("m", "t").id
    store.append_event(sid, "assemble", assemble(1_000))
    store.append_event(sid, "usage", usage(1_050))
    late = LateStore(store, hide_id=0)
    late_store = cast(Store, late)  # a Store that shows one event a read late
    follower = ContextFollower()
    follower.read(late_store, sid)
    hidden = store.append_event(sid, "assemble", assemble(3_000))
    store.append_event(sid, "usage", usage(3_100))
    late.hide_id = hidden.id
    follower.read(late_store, sid)  # sees the usage, not yet the report it belongs to
    assert follower.read(late_store, sid) == read_context(store, sid)
    assert follower.read(late_store, sid).reading.used == 3_100
    store.close()
