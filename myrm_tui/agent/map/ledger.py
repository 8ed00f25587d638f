"""Finished items, recorded as they finish, so a map re-run after a crash skips them.

Why store events, one per finished item, each in its own transaction: a kill at any moment
loses at most the items still in flight, and the records live with the session they were paid
for (`myrm -c` and `myrm run --session` reopen it). Failed items are not recorded: a re-run
gives them another chance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from myrm_tui.store import Store, event_kinds


@dataclass(frozen=True)
class Finished:
    key: str
    output: Any
    attempts: int
    tokens: int
    cost: float


class Ledger:
    def __init__(self, store: Store, session_id: str, map_id: str):
        self.store = store
        self.session_id = session_id
        self.map_id = map_id

    def finished(self) -> dict[str, Finished]:
        found: dict[str, Finished] = {}
        for event in self.store.events(self.session_id, event_kinds.MAP_ITEM):
            data = event.data
            if data.get("map") != self.map_id or not isinstance(data.get("key"), str):
                continue
            found[data["key"]] = Finished(
                data["key"],
                data.get("output"),
                int(data.get("attempts") or 1),
                int(data.get("tokens") or 0),
                float(data.get("cost") or 0.0),
            )
        return found

    def record(self, item: Finished) -> None:
        self.store.append_event(
            self.session_id,
            event_kinds.MAP_ITEM,
            {
                "map": self.map_id,
                "key": item.key,
                "output": item.output,
                "attempts": item.attempts,
                "tokens": item.tokens,
                "cost": item.cost,
            },
        )
