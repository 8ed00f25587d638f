"""The context engine's views as the plain dicts it passes, and as the rows context_views.py
stores: the key order of each row lives here, next to its reverse."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.store.database import context_views

_VIEW_KEYS = ("message_id", "event_id", "kind", "message", "tokens", "reason", "handle")
_SYNTHETIC_KEYS = ("before_id", "kind", "message", "tokens", "event_id", "covers_first", "covers_last", "handle")


def as_dicts(views: list[tuple], synthetic: list[tuple]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows from `context_views.load` as dicts, their messages decoded."""
    out_views = []
    for row in views:
        item = dict(zip(_VIEW_KEYS, row, strict=True))
        item["message"] = json.loads(item["message"]) if item["message"] is not None else None
        out_views.append(item)
    out_syn = []
    for row in synthetic:
        item = dict(zip(_SYNTHETIC_KEYS, row, strict=True))
        item["message"] = json.loads(item["message"])
        out_syn.append(item)
    return out_views, out_syn


def view_rows(event_id: int, views: list[dict[str, Any]]) -> list[tuple]:
    return [
        (
            v["message_id"],
            event_id,
            v["kind"],
            context_views.dumps(v["message"]),
            v["tokens"],
            v.get("reason", ""),
            v.get("handle", ""),
        )
        for v in views
    ]


def synthetic_rows(synthetic: list[dict[str, Any]]) -> list[tuple]:
    return [
        (
            s["before_id"],
            s["kind"],
            context_views.dumps(s["message"]),
            s["tokens"],
            s.get("covers_first"),
            s.get("covers_last"),
            s.get("handle", ""),
        )
        for s in synthetic
    ]
