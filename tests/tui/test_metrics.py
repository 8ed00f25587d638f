"""The pure figures behind the ring, the compaction panel and the health screen."""

from __future__ import annotations

from pathlib import Path

from myrm_tui.store import Store
from myrm_tui.store.records import EventRecord, MessageRecord
from myrm_tui.tui.figures import metrics
from myrm_tui.tui.figures.glyphs import braille_ring, sparkline
from myrm_tui.tui.prompt.fuzzy import fuzzy_filter, fuzzy_score


def ev(id_: int, kind: str, data: dict, at: float = 0.0) -> EventRecord:
    return EventRecord(id_, "s", kind, data, at or float(id_))


def msg(id_: int, message: dict) -> MessageRecord:
    return MessageRecord(id_, "s", id_, message["role"], message, 1, float(id_))


FULL_REPORT = {
    "tokens": 7_600,
    "messages": 9,
    "budget": {
        "window": 10_000,
        "output_reserve": 1_000,
        "safety_margin": 256,
        "prompt_limit": 8_744,
        "fixed_tokens": 2_100,
        "history_tokens": 5_500,
        "utilization": 0.869,
    },
    "ladder": {"tier": "full", "action": "deferred: provider cache is warm", "deferred": "full"},
    "stages": [
        {"stage": "sync", "tokens_in": 0, "tokens_out": 0, "items": 2, "ms": 0.4},
        {"stage": "render", "tokens_in": 5_000, "tokens_out": 5_500, "items": 0, "ms": 1.6},
    ],
    "breakers": {"smart_filter": "open"},
    "event": None,
    "cache_break": {"position": 3, "previous_len": 7, "reason": "history rewritten by compaction"},
    "ms": 2.5,
}


def test_reading_from_the_full_report_uses_the_prompt_limit():
    reading = metrics.context_reading([ev(1, "assemble", FULL_REPORT)])
    assert (reading.used, reading.limit, reading.window) == (7_600, 8_744, 10_000)
    assert (reading.fixed_tokens, reading.history_tokens) == (2_100, 5_500)
    assert reading.percent == 87 and reading.level == "warn"
    assert (reading.tier, reading.deferred) == ("full", "full")


def test_reading_from_the_early_report_and_missing_keys():
    reading = metrics.context_reading([ev(1, "assemble", {"tokens": 950, "prompt_limit": 1000, "window": 2000})])
    assert reading.ratio == 0.95 and reading.level == "crit"
    assert reading.fixed_tokens is None and reading.tier is None  # rows the tooltip hides
    only_window = metrics.context_reading([ev(1, "assemble", {"tokens": 100, "window": 1000})])
    assert only_window.limit == 1000 and only_window.level == "ok"
    assert metrics.context_reading([]).level == "unknown"
    assert metrics.context_reading([ev(1, "assemble", {"tokens": "junk"})]).percent is None


def test_reading_is_the_last_request_not_a_total():
    events = [
        ev(1, "assemble", {"tokens": 900, "prompt_limit": 1000}),
        ev(2, "usage", {"prompt_tokens": 910, "completion_tokens": 50}),
        ev(3, "assemble", {"tokens": 400, "prompt_limit": 1000}),
        ev(4, "usage", {"prompt_tokens": 420, "completion_tokens": 10}),
    ]
    reading = metrics.context_reading(events)
    assert reading.used == 420 and reading.source == "usage"  # the provider's count of the last call
    spend = metrics.session_spend(events)
    assert spend.prompt_tokens == 1_330 and spend.total_tokens == 1_390 and spend.calls == 2
    assert spend.cost is None  # nobody reported a cost: unknown, not $0


def test_compaction_after_the_last_request_lowers_the_reading():
    events = [
        ev(1, "assemble", {"tokens": 900, "prompt_limit": 1000}),
        ev(2, "compaction", {"state": "started", "tokens_after": 1}),
        ev(
            3,
            "compaction",
            {
                "state": "done",
                "id": "c1",
                "tier": "manual",
                "trigger": "manual",
                "tokens_before": 900,
                "tokens_after": 300,
                "items": 6,
                "ms": 12.0,
            },
        ),
    ]
    reading = metrics.context_reading(events)
    assert reading.used == 300 and reading.level == "ok" and reading.source == "compaction"


def test_compactions_are_deduplicated_across_reports_and_events():
    event = {
        "id": 41,  # the store id of the engine's compaction event
        "tier": "full",
        "trigger": "threshold",
        "tokens_before": 8000,
        "tokens_after": 3000,
        "saved": 5000,
        "items": 12,
        "ops": {},
        "ms": 40.0,
    }
    events = [
        ev(1, "assemble", {**FULL_REPORT, "event": event}),
        ev(2, "compaction", {"state": "done", **event}),
        ev(
            3,
            "compaction",
            {
                "state": "done",
                "tier": "light",
                "trigger": "threshold",
                "tokens_before": 5000,
                "tokens_after": 4000,
                "items": 2,
            },
        ),
    ]
    found = metrics.compactions(events)
    assert [(c.tier, c.saved) for c in found] == [("full", 5000), ("light", 1000)]  # saved derived
    assert found[0].summary == "compacted 12 messages, −5,000 tokens"


def test_cache_figures_and_breakers():
    events = [
        ev(1, "usage", {"prompt_tokens": 1000, "cached_read_tokens": 0, "cached_write_tokens": 900, "cost": 0.01}),
        ev(2, "usage", {"prompt_tokens": 1000, "cached_read_tokens": 800, "cost": 0.002}),
        ev(3, "assemble", FULL_REPORT),
    ]
    calls = metrics.cache_calls(events)
    assert [c.hit_rate for c in calls] == [0.0, 0.8]
    spend = metrics.session_spend(events)
    assert spend.cost is not None
    assert spend.cache_hit_rate == 0.4 and round(spend.cost, 3) == 0.012
    (found,) = metrics.cache_breaks(events)
    assert found.reason == "history rewritten by compaction" and found.position == 3
    assert metrics.latest_breakers(events) == {"smart_filter": "open"}
    assert metrics.latest_breakers(events[:2]) is None


def test_health_report_has_twenty_plus_figures_from_the_events(tmp_path: Path):
    store = Store.open(tmp_path)
    try:
        store.vault.put("x" * 1000)
        store.vault.put("y" * 24)
        size = metrics.vault_size(store.vault.directory)
    finally:
        store.close()
    assert (size.files, size.bytes) == (2, 1024)
    messages = [
        msg(1, {"role": "user", "content": "go"}),
        msg(
            2,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "function": {"name": "ctx_search", "arguments": "{}"}},
                    {"id": "b", "function": {"name": "bash", "arguments": "{}"}},
                ],
            },
        ),
        msg(3, {"role": "tool", "tool_call_id": "a", "content": "hits"}),
        msg(4, {"role": "tool", "tool_call_id": "b", "content": "error: exit 2"}),
        msg(5, {"role": "assistant", "content": "done"}),
    ]
    events = [
        ev(1, "assemble", FULL_REPORT),
        ev(2, "usage", {"prompt_tokens": 7000, "cached_read_tokens": 3500, "completion_tokens": 100, "cost": 0.5}),
        ev(3, "model_switch", {"old": "a", "new": "b"}),
        ev(4, "error", {"message": "x"}),
        ev(
            5,
            "compaction",
            {
                "state": "done",
                "tier": "light",
                "trigger": "manual",
                "tokens_before": 7000,
                "tokens_after": 5000,
                "items": 3,
                "ms": 5.0,
            },
        ),
        ev(6, "assemble", {**FULL_REPORT, "tokens": 5200}),
        ev(7, "usage", {"prompt_tokens": 5200, "cached_read_tokens": 0, "completion_tokens": 20}),
    ]
    report = metrics.health_report(messages, events, size)
    assert len(report.metrics) >= 20
    assert report.prompt_series == [7000, 5200]
    assert report.value("window used (last request)") == "59%"
    assert report.value("compactions") == "1" and report.value("tokens saved") == "2.0k"
    assert report.value("manual compactions") == "1"
    assert report.value("cache hit rate") == "29%"  # 3500 / 12200
    assert report.value("cache breaks") == "2"
    assert report.value("tool calls") == "2" and report.value("recall calls") == "1"
    assert report.value("tool errors") == "1" and report.value("errors") == "1"
    assert report.value("model switches") == "1" and report.value("session cost") == "$0.5000"
    assert report.value("circuit breakers") == "1 tripped"
    assert report.value("vault size") == "1.0 KB"
    assert report.value("model calls") == "2"
    assert report.value("prompt tokens per call") == "█▁"
    stage = next(m for m in report.metrics if m.name.startswith("stage time"))
    assert "sync 0.4" in stage.detail and "render 1.6" in stage.detail


def test_percentile_nearest_rank():
    assert metrics.percentile([], 50) is None
    assert metrics.percentile([5, 1, 3], 50) == 3
    assert metrics.percentile([1, 2, 3, 4], 50) == 2
    assert metrics.percentile([1, 2, 3, 4], 100) == 4


def test_braille_ring_fills_clockwise():
    assert braille_ring(0) == "\u2800\u2800"
    assert braille_ring(0.01) == "\u2800\u2801"  # anything above zero lights a dot
    assert braille_ring(0.5) == "\u2800\u2871"  # the whole right half
    assert braille_ring(1.0) == braille_ring(None) == braille_ring(3.0)
    full = braille_ring(1.0)
    assert (ord(full[0]) - 0x2800).bit_count() + (ord(full[1]) - 0x2800).bit_count() == 8


def test_sparkline_scales_to_its_range():
    assert sparkline([1, 2, 3], 10) == "▁▅█"
    assert sparkline([5, 5], 10) == "▅▅"
    assert sparkline(list(range(100)), 4) == "▁▃▆█"
    assert sparkline([], 4) == ""


def test_fuzzy_ranks_prefix_then_word_start_then_scattered():
    names = ["/export", "/compact", "/copy", "/clear", "/model"]
    assert fuzzy_filter("/co", names) == ["/copy", "/compact"]
    assert fuzzy_filter("cpt", names) == ["/compact"]
    assert fuzzy_score("zz", "/compact") is None
    paths = ["src/app/main.py", "docs/main.md", "main.py"]
    assert fuzzy_filter("main", paths)[0] == "main.py"
    assert fuzzy_filter("sam", paths)[0] == "src/app/main.py"


def test_dag_lines_nest_folded_children_under_their_parent():
    from myrm_tui.tui.widgets.compaction_panel import dag_lines

    def node(handle, depth, first, last, status="active", children=(), fallback=True):
        return {
            "handle": handle,
            "depth": depth,
            "first_id": first,
            "last_id": last,
            "covered_count": last - first + 1,
            "tokens": 120,
            "fallback": fallback,
            "status": status,
            "children": list(children),
            "model": "m",
        }

    lines = dag_lines(
        [
            node("S1", 0, 2, 9, "folded"),
            node("S2", 0, 10, 20, "folded"),
            node("S3", 1, 2, 20, children=["S1", "S2"], fallback=False),
            node("S4", 0, 21, 30),
        ]
    )
    assert lines[0].startswith("S3 d1 · msg 2–20") and "· m" in lines[0]
    assert lines[1].startswith("  S1 d0") and lines[2].startswith("  S2 d0") and "folded" in lines[1]
    assert lines[3].startswith("S4 d0") and "extractive" in lines[3]
