"""Numbers about a session's context, computed once from stored events (pure; no Textual).

The ring, the compaction panel and the health screen all read these functions, so a figure
shown in two places can never disagree. Inputs are store records; every report field is read
defensively (the engine's report grows over time, and older sessions hold smaller reports): a
missing value is None and the widget hides that row rather than showing a made-up zero.
"""

from __future__ import annotations

import math
import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from myrm_tui.store import event_kinds
from myrm_tui.store.records import EventRecord, MessageRecord
from myrm_tui.store.tool_status import stored_status
from myrm_tui.tui.constants import RING_CRIT_RATIO, RING_WARN_RATIO, SPARKLINE_WIDTH
from myrm_tui.tui.glyphs import sparkline

RECALL_TOOLS = frozenset({"ctx_search", "ctx_expand", "ctx_inspect"})


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# ----------------------------------------------------------------------------- the ring


@dataclass(frozen=True)
class ContextReading:
    """How full the prompt of the last request was (not a running total)."""

    used: int | None = None
    limit: int | None = None  # the prompt limit: window − output reserve − safety margin
    window: int | None = None
    output_reserve: int | None = None
    safety_margin: int | None = None
    fixed_tokens: int | None = None  # system prompt + tool schemas
    history_tokens: int | None = None
    tier: str | None = None  # the engine's ladder tier for that request
    deferred: str | None = None
    source: str = "none"  # assemble, usage, compaction, live, parent, estimate (a fresh fork), none

    @property
    def ratio(self) -> float | None:
        if self.used is None or not self.limit:
            return None
        return self.used / self.limit

    @property
    def percent(self) -> int | None:
        ratio = self.ratio
        return None if ratio is None else round(ratio * 100)

    @property
    def level(self) -> str:
        """ok / warn / crit, or unknown before the first request."""
        return level_for(self.ratio)


def level_for(ratio: float | None) -> str:
    if ratio is None:
        return "unknown"
    if ratio >= RING_CRIT_RATIO:
        return "crit"
    if ratio >= RING_WARN_RATIO:
        return "warn"
    return "ok"


def reading_from_report(report: Mapping[str, Any]) -> ContextReading:
    """One `assemble` report → reading. Handles the engine's full report and the early
    pass-through one (`tokens`, `prompt_limit`, `window` at the top level)."""
    budget = _dict(report.get("budget"))
    ladder = _dict(report.get("ladder"))
    limit = _int(budget.get("prompt_limit"))
    if limit is None:
        limit = _int(report.get("prompt_limit"))
    window = _int(budget.get("window"))
    if window is None:
        window = _int(report.get("window"))
    if limit is None:
        limit = window
    return ContextReading(
        used=_int(report.get("tokens")),
        limit=limit,
        window=window,
        output_reserve=_int(budget.get("output_reserve")),
        safety_margin=_int(budget.get("safety_margin")),
        fixed_tokens=_int(budget.get("fixed_tokens")),
        history_tokens=_int(budget.get("history_tokens")),
        tier=ladder.get("tier") if isinstance(ladder.get("tier"), str) else None,
        deferred=ladder.get("deferred") if isinstance(ladder.get("deferred"), str) else None,
        source="assemble",
    )


def context_reading(events: Sequence[EventRecord]) -> ContextReading:
    """The latest request's reading: the newest assemble report, corrected by what came after
    it — the provider's own prompt count for that call (usage), or a compaction's result."""
    latest: EventRecord | None = None
    for event in events:
        if event.kind == event_kinds.ASSEMBLE and (latest is None or event.id > latest.id):
            latest = event
    if latest is None:
        return ContextReading()
    reading = reading_from_report(latest.data)
    after = sorted((e for e in events if e.id > latest.id), key=lambda e: e.id)
    for event in after:
        if event.kind == event_kinds.USAGE:
            prompt = _int(event.data.get("prompt_tokens"))
            if prompt:
                reading = _replace(reading, used=prompt, source="usage")
        elif event.kind == event_kinds.COMPACTION and _compaction_done(event.data):
            tokens_after = _int(event.data.get("tokens_after"))
            if tokens_after is not None:
                reading = _replace(reading, used=tokens_after, history_tokens=None, source="compaction")
    return reading


def _replace(reading: ContextReading, **changes: Any) -> ContextReading:
    return replace(reading, **changes)


# ----------------------------------------------------------------------------- spend


@dataclass(frozen=True)
class Spend:
    """Session totals over every model call (cumulative, unlike the ring)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    cost: float | None = None  # None: no call reported a cost

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cache_hit_rate(self) -> float | None:
        """Share of prompt tokens served from the provider cache."""
        return self.cached_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    def add(self, data: Mapping[str, Any]) -> Spend:
        cost = _float(data.get("cost"))
        return Spend(
            calls=self.calls + 1,
            prompt_tokens=self.prompt_tokens + (_int(data.get("prompt_tokens")) or 0),
            completion_tokens=self.completion_tokens + (_int(data.get("completion_tokens")) or 0),
            cached_read_tokens=self.cached_read_tokens + (_int(data.get("cached_read_tokens")) or 0),
            cached_write_tokens=self.cached_write_tokens + (_int(data.get("cached_write_tokens")) or 0),
            cost=self.cost if cost is None else (self.cost or 0.0) + cost,
        )


def session_spend(events: Iterable[EventRecord]) -> Spend:
    spend = Spend()
    for event in events:
        if event.kind == event_kinds.USAGE:
            spend = spend.add(event.data)
    return spend


# ----------------------------------------------------------------------------- compaction


@dataclass(frozen=True)
class Compaction:
    key: str  # the engine's event id, else the store event id
    tier: str
    trigger: str
    tokens_before: int | None
    tokens_after: int | None
    saved: int | None
    items: int | None
    ms: float | None
    created_at: float

    @property
    def summary(self) -> str:
        """The transcript divider's words."""
        if self.items is None:
            parts = ["compacted"]
        else:
            parts = [f"compacted {self.items} message{'' if self.items == 1 else 's'}"]
        if self.saved:
            parts.append(f"−{self.saved:,} tokens")
        return ", ".join(parts)


def _compaction_done(data: Mapping[str, Any]) -> bool:
    state = data.get("state")
    return state is None or state == "done"


def _compaction(data: Mapping[str, Any], key: str, created_at: float) -> Compaction:
    before, after = _int(data.get("tokens_before")), _int(data.get("tokens_after"))
    saved = _int(data.get("saved"))
    if saved is None and before is not None and after is not None:
        saved = before - after
    return Compaction(
        key=str(data.get("id") or key),
        tier=str(data.get("tier") or "?"),
        trigger=str(data.get("trigger") or "?"),
        tokens_before=before,
        tokens_after=after,
        saved=saved,
        items=_int(data.get("items")),
        ms=_float(data.get("ms")),
        created_at=created_at,
    )


def compactions(events: Iterable[EventRecord]) -> list[Compaction]:
    """Finished compactions, oldest first: `compaction` events and reports' `event` entries,
    deduplicated by the engine's id (the engine may record one compaction both ways)."""
    found: dict[str, Compaction] = {}
    for event in sorted(events, key=lambda e: e.id):
        if event.kind == event_kinds.COMPACTION and _compaction_done(event.data):
            item = _compaction(event.data, f"event:{event.id}", event.created_at)
        elif event.kind == event_kinds.ASSEMBLE and isinstance(event.data.get("event"), Mapping):
            item = _compaction(event.data["event"], f"event:{event.id}", event.created_at)
        else:
            continue
        found.setdefault(item.key, item)
    return list(found.values())


# ----------------------------------------------------------------------------- cache


@dataclass(frozen=True)
class CacheCall:
    prompt_tokens: int
    cached_read_tokens: int
    cached_write_tokens: int

    @property
    def hit_rate(self) -> float | None:
        return self.cached_read_tokens / self.prompt_tokens if self.prompt_tokens else None


@dataclass(frozen=True)
class CacheBreak:
    position: int | None
    previous_len: int | None
    reason: str
    created_at: float


def cache_calls(events: Iterable[EventRecord]) -> list[CacheCall]:
    return [
        CacheCall(
            _int(e.data.get("prompt_tokens")) or 0,
            _int(e.data.get("cached_read_tokens")) or 0,
            _int(e.data.get("cached_write_tokens")) or 0,
        )
        for e in events
        if e.kind == event_kinds.USAGE
    ]


def cache_breaks(events: Iterable[EventRecord]) -> list[CacheBreak]:
    out = []
    for event in events:
        if event.kind != event_kinds.ASSEMBLE:
            continue
        found = event.data.get("cache_break")
        if isinstance(found, Mapping):
            out.append(
                CacheBreak(
                    _int(found.get("position")),
                    _int(found.get("previous_len")),
                    str(found.get("reason") or "unknown"),
                    event.created_at,
                )
            )
    return out


def latest_breakers(events: Sequence[EventRecord]) -> dict[str, str] | None:
    """Stage → state from the newest report that has a `breakers` entry (None: never reported)."""
    for event in reversed(events):
        if event.kind == event_kinds.ASSEMBLE and isinstance(event.data.get("breakers"), Mapping):
            return {str(k): str(v) for k, v in event.data["breakers"].items()}
    return None


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
    by_depth = Counter(_int(n.get("depth")) or 0 for n in kept)
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
) -> HealthReport:
    """Every figure of the context health screen. `reading` is the ring's (context_source's
    `read_context`, so a fresh fork shows the same figure in both) and `summaries` the store's
    summary nodes (what the compaction panel lists); without them both are derived from events."""
    events = sorted(events, key=lambda e: e.id)
    if reading is None:
        reading = context_reading(events)
    spend = session_spend(events)
    reports = [e.data for e in events if e.kind == event_kinds.ASSEMBLE]
    usage_series = [_int(e.data.get("prompt_tokens")) or 0 for e in events if e.kind == event_kinds.USAGE]
    series = usage_series or [t for t in (_int(r.get("tokens")) for r in reports) if t is not None]
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
        if event.kind == event_kinds.COMPACTION and event.data.get("state") == "done":
            created = _dict(_dict(event.data.get("summaries")).get("created_by_depth"))
            by_depth.update({str(k): _int(v) or 0 for k, v in created.items()})
            fallbacks += _int(_dict(event.data.get("summaries")).get("fallback")) or 0
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
    prepared = [e.data for e in events if e.kind == "summary"]
    add(
        "compaction",
        "summarizer calls",
        str(sum(_int(d.get("attempts")) or 0 for d in prepared)),
        f"in {_tokens(sum(_int(d.get('tokens_in')) or 0 for d in prepared))} · out "
        f"{_tokens(sum(_int(d.get('tokens_out')) or 0 for d in prepared))} · "
        f"${sum(_float(d.get('cost')) or 0.0 for d in prepared):.4f}",
    )
    # cache
    add("cache", "cache hit rate", _pct(spend.cache_hit_rate), "cached read ÷ prompt tokens")
    add("cache", "cached read tokens", _tokens(spend.cached_read_tokens))
    add("cache", "cached write tokens", _tokens(spend.cached_write_tokens))
    add("cache", "cache breaks", str(len(breaks)), breaks[-1].reason if breaks else "")
    # engine
    stage_ms: dict[str, list[float]] = {}
    for report in reports:
        for stage in report.get("stages") or ():
            if isinstance(stage, Mapping) and _float(stage.get("ms")) is not None:
                stage_ms.setdefault(str(stage.get("stage", "?")), []).append(float(stage["ms"]))
    if stage_ms:
        detail = " · ".join(f"{name} {percentile(v, 50):.1f}" for name, v in stage_ms.items())
        add("engine", "stage time p50 (ms)", f"{sum(percentile(v, 50) or 0 for v in stage_ms.values()):.1f} ms", detail)
    else:
        add("engine", "stage time p50 (ms)", "—")
    assemble_ms = [m for m in (_float(r.get("ms")) for r in reports) if m is not None]
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
