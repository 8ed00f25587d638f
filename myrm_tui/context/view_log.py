"""Where decided views live between turns and processes.

Why persist rendered text instead of recomputing: a view is decided once (at ingestion or at a
compaction event) and must come back byte-for-byte on every later turn, across restarts and
across upgrades of the filters, or the provider's prompt cache breaks for no reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from myrm_tui.context.rows.views import View

if TYPE_CHECKING:
    from myrm_tui.store.store import Store


@dataclass(frozen=True)
class SyntheticView:
    """A message the engine adds (omission marker, post-compaction reread), placed just
    before the stored message `before_id`."""

    before_id: int
    kind: str  # "summary" (a DAG node standing for removed history) or "reread"
    message: dict[str, Any]
    tokens: int
    event_id: int
    covers: tuple[int, int] | None = None  # first and last message id a marker stands for
    handle: str = ""  # the summary node (S12) a summary view shows


class ViewLog(Protocol):
    def load_views(self, session_id: str) -> tuple[dict[int, View], list[SyntheticView]]: ...

    def save_views(
        self, session_id: str, event_id: int, views: dict[int, View], synthetic: list[SyntheticView] | None
    ) -> None:
        """Record `views` (latest wins per message) and, when not None, replace the
        synthetic set."""


class StoreViewLog:
    """The store-backed log (the store speaks plain dicts; this adapter owns the types)."""

    def __init__(self, store: Store):
        self.store = store

    def load_views(self, session_id: str) -> tuple[dict[int, View], list[SyntheticView]]:
        rows, synthetic = self.store.load_context_views(session_id)
        views = {
            r["message_id"]: View(r["kind"], r["message"], r["tokens"], r["reason"], r["handle"], r["event_id"])
            for r in rows
        }
        syn = [
            SyntheticView(
                s["before_id"],
                s["kind"],
                s["message"],
                s["tokens"],
                s["event_id"],
                (s["covers_first"], s["covers_last"]) if s["covers_first"] is not None else None,
                s.get("handle") or "",
            )
            for s in synthetic
        ]
        return views, syn

    def save_views(
        self, session_id: str, event_id: int, views: dict[int, View], synthetic: list[SyntheticView] | None
    ) -> None:
        view_rows = [
            {
                "message_id": mid,
                "kind": v.kind,
                "message": v.message,
                "tokens": v.tokens,
                "reason": v.reason,
                "handle": v.handle,
            }
            for mid, v in views.items()
        ]
        syn_rows = (
            None
            if synthetic is None
            else [
                {
                    "before_id": s.before_id,
                    "kind": s.kind,
                    "message": s.message,
                    "tokens": s.tokens,
                    "covers_first": s.covers[0] if s.covers else None,
                    "covers_last": s.covers[1] if s.covers else None,
                    "handle": s.handle,
                }
                for s in synthetic
            ]
        )
        self.store.save_context_views(session_id, event_id, view_rows, syn_rows)
