"""The context health screen's figures, computed once from stored records (pure; no Textual).

Why apart from `event_figures.py`: that module reads single figures the ring and the panel
share; this one assembles the whole screen from them. Both are re-exported here, so
`tui.metrics` stays the one import for every figure the TUI shows.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myrm_tui.context.assemble_report import AssembleReport
from myrm_tui.context.compaction.event import DONE, CompactionEvent
from myrm_tui.context.rows.json_fields import float_or_none, int_or_none
from myrm_tui.store import event_kinds
from myrm_tui.store.records import EventRecord, MessageRecord
from myrm_tui.store.tool_status import stored_status
from myrm_tui.tui.constants import SPARKLINE_WIDTH
from myrm_tui.tui.figures.event_figures import (
    CacheBreak,
    CacheCall,
    Compaction,
    ContextReading,
    Spend,
    cache_breaks,
    cache_calls,
    compactions,
    context_reading,
    latest_breakers,
    level_for,
    reading_from_report,
    session_spend,
)
from myrm_tui.tui.figures.glyphs import sparkline

RECALL_TOOLS = frozenset({"ctx_search", "ctx_expand", "ctx_inspect"})

__all__ = [
    "CacheBreak",
    "CacheCall",
    "Compaction",
    "ContextReading",
    "HealthReport",
    "Metric",
    "Spend",
    "VaultSize",
    "cache_breaks",
    "cache_calls",
    "compactions",
    "context_reading",
    "health_report",
    "latest_breakers",
    "level_for",
    "percentile",
    "reading_from_report",
    "session_spend",
    "summary_counts",
    "vault_size",
]


# ----------------------------------------------------------------------------- health screen


@dataclass(frozen=True)
class Metric:
    card: str  # which card of the health screen: context, compaction, cache, engine, session
    name: str
    value: str
    detail: str = ""


@dataclass(frozen=True)
class VaultSize:
    files: int
    bytes: int


def vault_size(directory: Path) -> VaultSize:
    """Files directly in the vault folder (the vault is flat) and their total size."""
    files = size = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return VaultSize(0, 0)
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                files += 1
                size += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return VaultSize(files, size)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, min(len(ordered), -(-len(ordered) * q // 100)))
    return ordered[int(rank) - 1]


def _tokens(n: int | None) -> str:
    if n is None:
        return "—"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


def _pct(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio * 100:.0f}%"


def _tool_calls(messages: Iterable[MessageRecord]) -> list[str]:
    names = []
    for record in messages:
        for call in record.message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, Mapping) else None
            names.append(str((function or {}).get("name", "?")))
    return names


def _tool_errors(messages: Iterable[MessageRecord]) -> int:
    count = 0
    for record in messages:
        if record.role != "tool":
            continue
        if stored_status(record.message) in ("error", "timeout"):
            count += 1
    return count


@dataclass(frozen=True)
class HealthReport:
    metrics: list[Metric] = field(default_factory=list)
    prompt_series: list[int] = field(default_factory=list)  # prompt tokens per model call

    def card(self, name: str) -> list[Metric]:
        return [m for m in self.metrics if m.card == name]

    def value(self, name: str) -> str:
        for metric in self.metrics:
            if metric.name == name:
                return metric.value
        raise KeyError(name)


def summary_counts(nodes: Sequence[Mapping[str, Any]]) -> tuple[int, str, float | None]:
    """(nodes, detail, fallback share) of the session's summary nodes as the store holds them:
    the compaction panel lists the same nodes, so both say S1–S3 is three."""
    kept = [n for n in nodes if n.get("status") != "discarded"]
    if not kept:
        return 0, "", None
    by_status = Counter(str(n.get("status", "?")) for n in kept)
    by_depth = Counter(int_or_none(n.get("depth")) or 0 for n in kept)
    detail = " · ".join(
        [
            *(f"{s} {by_status[s]}" for s in ("active", "prepared", "folded") if by_status[s]),
            *(f"depth {d}: {by_depth[d]}" for d in sorted(by_depth)),
        ]
    )
    return len(kept), detail, sum(1 for n in kept if n.get("fallback")) / len(kept)


def health_report(
    messages: Sequence[MessageRecord],
    events: Sequence[EventRecord],
    vault: VaultSize | None = None,
    *,
    reading: ContextReading | None = None,
    summaries: Sequence[Mapping[str, Any]] | None = None,
    prompt_cache: bool = True,
) -> HealthReport:
    """Every figure of the context health screen. `reading` is the ring's (context_source's
    `read_context`, so a fresh fork shows the same figure in both) and `summaries` the store's
    summary nodes (what the compaction panel lists); without them both are derived from events."""
    events = sorted(events, key=lambda e: e.id)
    if reading is None:
        reading = context_reading(events)
    spend = session_spend(events)
    reports = [AssembleReport.from_dict(e.data) for e in events if e.kind == event_kinds.ASSEMBLE]
    usage_series = [int_or_none(e.data.get("prompt_tokens")) or 0 for e in events if e.kind == event_kinds.USAGE]
    series = usage_series or [r.tokens for r in reports if r.tokens is not None]
    done = compactions(events)
    breaks = cache_breaks(events)
    breakers = latest_breakers(events)
    calls = _tool_calls(messages)
    out: list[Metric] = []

    def add(card: str, name: str, value: str, detail: str = "") -> None:
        out.append(Metric(card, name, value, detail))

    # context
    source = {
        "parent": " · the parent's last request (no request in this fork yet)",
        "estimate": " · estimated: no request in this fork yet",
    }.get(reading.source, "")
    add(
        "context",
        "window used (last request)",
        _pct(reading.ratio),
        f"{_tokens(reading.used)} / {_tokens(reading.limit)} tokens{source}",
    )
    add("context", "model window", _tokens(reading.window))
    add("context", "fixed prefix (system + tools)", _tokens(reading.fixed_tokens))
    add("context", "history in prompt", _tokens(reading.history_tokens))
    add(
        "context",
        "prompt tokens per call",
        sparkline(series, SPARKLINE_WIDTH) or "—",
        f"min {_tokens(min(series))} · max {_tokens(max(series))}" if series else "",
    )
    add("context", "peak prompt", _tokens(max(series)) if series else "—")
    add("context", "ladder tier", reading.tier or "—", f"deferred: {reading.deferred}" if reading.deferred else "")
    # compaction
    per_tier = Counter(c.tier for c in done)
    saved = [c.saved for c in done if c.saved is not None]
    add("compaction", "compactions", str(len(done)), " · ".join(f"{tier} {n}" for tier, n in sorted(per_tier.items())))
    add("compaction", "tokens saved", _tokens(sum(saved)) if saved else "0")
    add("compaction", "mean saved per compaction", _tokens(round(statistics.mean(saved))) if saved else "—")
    triggers = Counter(c.trigger for c in done)
    add("compaction", "manual compactions", str(triggers.get("manual", 0)))
    ms = [c.ms for c in done if c.ms is not None]
    add("compaction", "compaction time", f"{sum(ms):.0f} ms" if ms else "—")
    by_depth: Counter[str] = Counter()
    fallbacks = 0
    for event in events:
        if event.kind == event_kinds.COMPACTION:
            compaction = CompactionEvent.from_dict(event.data)
            if compaction.state == DONE:
                by_depth.update(compaction.summaries.created_by_depth)
                fallbacks += compaction.summaries.fallback
    total = sum(by_depth.values())
    if summaries is not None:
        count, detail, fallback_share = summary_counts(summaries)
        add("compaction", "summaries", str(count), detail)
        add("compaction", "summary fallback rate", _pct(fallback_share), "extractive (no model) share of the summaries")
    else:
        add("compaction", "summaries", str(total), " · ".join(f"depth {d}: {n}" for d, n in sorted(by_depth.items())))
        add(
            "compaction",
            "summary fallback rate",
            _pct(fallbacks / total) if total else "—",
            "extractive (no model) share of new summaries",
        )
    prepared = [e.data for e in events if e.kind == event_kinds.SUMMARY]
    add(
        "compaction",
        "summarizer calls",
        str(sum(int_or_none(d.get("attempts")) or 0 for d in prepared)),
        f"in {_tokens(sum(int_or_none(d.get('tokens_in')) or 0 for d in prepared))} · out "
        f"{_tokens(sum(int_or_none(d.get('tokens_out')) or 0 for d in prepared))} · "
        f"${sum(float_or_none(d.get('cost')) or 0.0 for d in prepared):.4f}",
    )
    # cache (`prompt_cache` False: the model has none, so its rows would be zeros and its breaks noise)
    if not prompt_cache:
        add("cache", "prompt cache", "none", "this model has no prompt cache")
    else:
        add("cache", "cache hit rate", _pct(spend.cache_hit_rate), "cached read ÷ prompt tokens")
        add("cache", "cached read tokens", _tokens(spend.cached_read_tokens))
        add("cache", "cached write tokens", _tokens(spend.cached_write_tokens))
        add("cache", "cache breaks", str(len(breaks)), breaks[-1].reason if breaks else "")
    # engine
    stage_ms: dict[str, list[float]] = {}
    for report in reports:
        for stage in report.stages:
            if stage.ms is not None:
                stage_ms.setdefault(stage.name, []).append(stage.ms)
    if stage_ms:
        detail = " · ".join(f"{name} {percentile(v, 50):.1f}" for name, v in stage_ms.items())
        add("engine", "stage time p50 (ms)", f"{sum(percentile(v, 50) or 0 for v in stage_ms.values()):.1f} ms", detail)
    else:
        add("engine", "stage time p50 (ms)", "—")
    assemble_ms = [r.ms for r in reports if r.ms is not None]
    add("engine", "assemble time p50", f"{percentile(assemble_ms, 50):.1f} ms" if assemble_ms else "—")
    add("engine", "model calls", str(max(len(reports), spend.calls)))
    if breakers is None:
        add("engine", "circuit breakers", "—")
    else:
        add(
            "engine",
            "circuit breakers",
            "all closed" if not breakers else f"{len(breakers)} tripped",
            " · ".join(f"{k}: {v}" for k, v in sorted(breakers.items())),
        )
    # session
    add("session", "messages", str(len(messages)))
    add(
        "session",
        "user turns",
        str(sum(1 for m in messages if m.role == "user" and not m.message.get("myrm_synthetic"))),
    )
    add("session", "tool calls", str(len(calls)))
    add("session", "tool errors", str(_tool_errors(messages)))
    recall = Counter(name for name in calls if name in RECALL_TOOLS)
    add("session", "recall calls", str(sum(recall.values())), " · ".join(f"{k} {v}" for k, v in sorted(recall.items())))
    add("session", "errors", str(sum(1 for e in events if e.kind == event_kinds.ERROR)))
    add("session", "interrupts", str(sum(1 for e in events if e.kind == event_kinds.INTERRUPTED)))
    add("session", "model switches", str(sum(1 for e in events if e.kind == event_kinds.MODEL_SWITCH)))
    add(
        "session",
        "tokens spent",
        _tokens(spend.total_tokens),
        f"prompt {_tokens(spend.prompt_tokens)} · output {_tokens(spend.completion_tokens)}",
    )
    add("session", "session cost", "—" if spend.cost is None else f"${spend.cost:.4f}")
    if vault is not None:
        add("session", "vault size", _bytes(vault.bytes), f"{vault.files} files")
    return HealthReport(out, series)
