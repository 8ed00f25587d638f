"""Issue 17, TUI target 1: the ring's per-event refresh must cost the same at 0, 2k and 20k stored events.

Why in-process and on the store alone: the cost that grew with the session was the store read
behind the ring (every usage row decoded again on each model call); the widgets' part of a
refresh does not depend on the session's length. Each sample stores one model call's events
(an assemble report and its usage row), then times one refresh two ways: `read_context` (a
fresh read, what every refresh did before) and a `ContextFollower` that has followed the
session so far (what the chat does now). Both must give the same state; a mismatch is reported.

Run: `python -m bench.tui_bench --only refresh [--sizes 0,2000,20000]`.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# The sizes: an empty session, a long one, and ten times that.
EVENT_COUNTS = (0, 2_000, 20_000)
# Refreshes timed per size: enough for a p95 that is not just the slowest sample.
REFRESH_SAMPLES = 60

_BUDGET = {
    "window": 200_000,
    "output_reserve": 8_000,
    "safety_margin": 1_024,
    "prompt_limit": 190_976,
    "fixed_tokens": 12_000,
    "history_tokens": 40_000,
}


def _assemble(tokens: int) -> dict[str, Any]:
    """A report of the engine's usual size (budget, stages, ladder), so decoding costs what it does."""
    stages = [
        {"stage": name, "tokens_in": tokens, "tokens_out": tokens, "items": 3, "ms": 0.4}
        for name in ("sync", "filter", "compact", "cache", "render")
    ]
    return {
        "tokens": tokens,
        "budget": _BUDGET,
        "stages": stages,
        "breakers": {},
        "ladder": {"tier": "none", "action": "monitoring", "deferred": None},
        "event": None,
        "cache_break": None,
        "ms": 2.0,
    }


def _usage(tokens: int) -> dict[str, Any]:
    return {
        "model": "bench/model",
        "prompt_tokens": tokens,
        "completion_tokens": 120,
        "cached_read_tokens": tokens // 2,
        "cached_write_tokens": 300,
        "cost": 0.001,
    }


def _store_call(store: Any, sid: str, index: int) -> None:
    tokens = 50_000 + index % 1_000
    store.append_event(sid, "assemble", _assemble(tokens))
    store.append_event(sid, "usage", _usage(tokens + 7))


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000, value


def measure_size(events: int, samples: int) -> dict[str, Any]:
    from myrm_tui.store import Store
    from myrm_tui.tui.figures.context_source import ContextFollower, read_context

    with tempfile.TemporaryDirectory(prefix="tui-refresh-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        store = Store.open(workspace)
        try:
            sid = store.create_session("bench/model", "refresh bench").id
            t0 = time.perf_counter()
            for index in range(events // 2):
                _store_call(store, sid, index)
            seed_s = time.perf_counter() - t0
            follower = ContextFollower()
            first_ms, _ = _timed(lambda: follower.read(store, sid))
            fresh: list[float] = []
            followed: list[float] = []
            mismatches = 0
            for index in range(samples):
                _store_call(store, sid, events + index)
                ms_fresh, state_fresh = _timed(lambda: read_context(store, sid))
                ms_followed, state_followed = _timed(lambda: follower.read(store, sid))
                fresh.append(ms_fresh)
                followed.append(ms_followed)
                mismatches += state_fresh != state_followed
        finally:
            store.close()
    return {
        "events": events,
        "seed_s": seed_s,
        "first_read_ms": first_ms,
        "fresh_read_ms": fresh,
        "followed_read_ms": followed,
        "mismatches": mismatches,
    }


def measure_refresh(
    sizes: Sequence[int], samples: int, summary: Callable[[Sequence[float]], dict[str, Any]], log: Callable[[str], None]
) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        row = measure_size(size, samples)
        row["fresh_read_ms"] = summary(row["fresh_read_ms"])
        row["followed_read_ms"] = summary(row["followed_read_ms"])
        rows.append(row)
        log(f"  refresh with {size} stored events done")
    return rows
