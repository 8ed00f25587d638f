"""Every benchmark figure of one replay, recomputed from the prompts it sent.

Trusts no engine report: tokens are recounted with one shared counter, pairing and prefixes are
checked on the messages, needles are searched in the text. The only figures taken from the OUT
file as given are the engine's own timings (`engine_ms`) and summarizer spend
(`summarizer_tokens`), which cannot be observed from outside.

    python -m bench.score OUT --session S --answers A --window 64000 --reserve 4096 [--json]

Definitions (B1-B5 of docs/benchmarks.md, "Definitions"):
- budget: a turn is over budget when prompt tokens + output reserve > window;
- prefix break: the previous request is not a prefix of the current one (message level);
  `deep_breaks` counts turns that reuse less than half of the previous request;
- prefix ratio: LCP tokens / prompt tokens; "token-weighted" = Σ LCP / Σ prompt over turns 2..T
  (turn 1 has no previous request). Two granularities: OpenAI-like (whole identical messages plus
  the common part of the first differing one, prorated by characters) and Anthropic-like (whole
  messages only);
- R_verbatim: the expected `NEEDLE-id field=value` is in that turn's prompt text; R_1: or in the
  probe's recall result (one call). For a re-read file (carrier 4) the expected value is the newer
  one; `stale` counts lost probes where the old value was visible (prompt or recall result);
- cost: see `PRICES` below; a prefix only counts as cached while the provider still holds it
  (`bench/cache_ttl.py`: pauses past the cache TTL, keep-alive probes).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.cache_ttl import bill, turn_times
from bench.needles import needle_pattern
from bench.prefix import canonical, normalize_message, overlap
from bench.sessionio import SessionFormatError, answers_path_for, read_answers, read_jsonl, read_session
from bench.structure import ERROR_KEYS, check_structure
from bench.summary_tally import SummaryTally, summary_line

# The model whose tokenizer is the shared counter for all contenders (o200k, like current models).
SHARED_COUNTER_MODEL = "gpt-4o"
# Price factors relative to one uncached input token (B5, docs/benchmarks.md). Cache reads cost 0.1
# on both providers' current pricing. Anthropic bills a prompt's uncached part as a cache write
# (1.25, 5-minute TTL) since every request here places a breakpoint; OpenAI caches automatically
# and bills the uncached part at the plain rate (1.0), but only caches from 1,024 tokens on and
# in 128-token steps.
PRICES = {"cache_read": 0.1, "anthropic_uncached": 1.25, "openai_uncached": 1.0}
OPENAI_MIN_CACHED = 1024
OPENAI_CACHE_STEP = 128
# Tokens an agent spends re-fetching a fact it lost (re-running the tool and reading its output).
REFETCH_PENALTY_TOKENS = 2000
# B1 buckets: "at L turns" = the last 50 turns before L (B1 in docs/benchmarks.md).
TIMING_BUCKETS = (100, 200, 400, 800)
TIMING_WINDOW = 50
TIMING_MIN_SAMPLES = 10
# A "deep" break reuses less than this share of the previous request.
DEEP_BREAK_SHARE = 0.5

MessageCounter = Callable[[dict[str, Any]], int]


def default_count() -> MessageCounter:
    """The shared counter: myrm's per-message count with the o200k tokenizer."""
    import myrm_tui  # noqa: F401  (offline tiktoken/litellm environment first)
    from myrm_tui.context.window.tokens import count_message_tokens

    return lambda message: count_message_tokens(message, SHARED_COUNTER_MODEL)


def default_count_tools(tools: list[dict[str, Any]]) -> int:
    from myrm_tui.context.window.tokens import count_tools_tokens

    return count_tools_tokens(tools, SHARED_COUNTER_MODEL)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """What the model reads, as text: contents, text parts, tool-call names and arguments (no image bytes)."""
    pieces: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            pieces.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    pieces.append(str(part.get("text", "")))
                elif isinstance(part, str):
                    pieces.append(part)
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            pieces.append(f"{function.get('name', '')} {function.get('arguments', '')}")
        if message.get("reasoning_content"):
            pieces.append(str(message["reasoning_content"]))
    return "\n".join(pieces)


def user_texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return []


def percentile(values: list[float], share: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _find_key(value: Any, key: str) -> int:
    """Sum of every numeric `key` anywhere in a nested event structure."""
    if isinstance(value, dict):
        total = 0
        for k, v in value.items():
            if k == key and isinstance(v, (int, float)) and not isinstance(v, bool):
                total += v
            else:
                total += _find_key(v, key)
        return total
    if isinstance(value, list):
        return sum(_find_key(v, key) for v in value)
    return 0


def _claimed_compaction(line: dict[str, Any]) -> bool | None:
    """The engine's own claim that it compacted this turn (None: the OUT file does not say).

    Accepted: a top-level `"compaction": bool`, or a stage report carrying an `"event"` key (a
    non-empty object when a compaction ran, null otherwise), as `myrm replay` writes. Only used
    to judge breaks against compactions (B3 target: breaks <= compactions + 1).
    """
    if "compaction" in line:
        return bool(line["compaction"])
    reports = [e for e in line.get("events") or () if isinstance(e, dict) and "event" in e]
    if not reports:
        return None
    return any(isinstance(e["event"], dict) and e["event"] for e in reports)


def _slope(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 2:
        return None
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    denominator = sum((x - mean_x) ** 2 for x in xs)
    if denominator == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / denominator


def _ratio(numerator: float, denominator: float) -> float | None:
    return None if denominator == 0 else numerator / denominator


class _Scorer:
    def __init__(
        self,
        session_path: Path,
        answers: dict[str, Any],
        *,
        window: int,
        output_reserve: int,
        count: MessageCounter,
        count_tools: Callable[[list[dict[str, Any]]], int],
        refetch_penalty: int,
        session: Any = None,
    ) -> None:
        self.window = window
        self.reserve = output_reserve
        self.count = count
        self.count_tools = count_tools
        self.refetch_penalty = refetch_penalty
        self._token_cache: dict[str, int] = {}
        session = session if session is not None else read_session(session_path)
        self.session_turns = sorted(session.turns)
        self.gaps = dict(session.gaps)
        self.turn_at = turn_times(session.turns, session.gaps)
        self.keepalive: dict[int, list[float]] = {}  # the OUT line's probes, per turn
        # Latest user message and raw history size (messages) as of each turn.
        self.latest_user: dict[int, list[str]] = {}
        self.history_size: dict[int, int] = {}
        latest: list[str] = []
        size = 0
        for turn in self.session_turns:
            for message in session.turns[turn]:
                size += 1
                if message.get("role") == "user":
                    latest = user_texts(message)
            self.latest_user[turn] = latest
            self.history_size[turn] = size
        # Probes due per turn, from the answers (the truth), not from the OUT file.
        self.probes: list[dict[str, Any]] = []
        self.due: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for needle in answers["needles"]:
            pattern = needle_pattern(needle["needle"])
            old = needle_pattern(needle["old_needle"]) if needle.get("old_needle") else None
            for probe in needle.get("probes", []):
                record = {
                    "turn": int(probe["turn"]),
                    "lag": int(probe["lag"]),
                    "query": probe["query"],
                    "carrier": int(needle["carrier"]),
                    # G1 sessions (bench/fact_sessions.py) also say the fact's format, whether it
                    # breaks its output's shape, and whether a later message named it.
                    "format": needle.get("format"),
                    "shape_break": needle.get("shape_break"),
                    "named": needle.get("named_turn") is not None and needle["named_turn"] <= int(probe["turn"]),
                    "needle": needle["needle"],
                    "pattern": pattern,
                    "old": old,
                    "in_prompt": False,
                    "in_result": False,
                    "stale": False,
                    "turn_seen": False,
                }
                self.probes.append(record)
                self.due[record["turn"]].append(record)
        constraint = answers.get("constraint") or {}
        self.constraint_pattern = needle_pattern(constraint["needle"]) if constraint.get("needle") else None
        self.constraint_text = constraint.get("text")
        # Accumulators.
        self.turns_seen: list[int] = []
        self.prompt_tokens: list[int] = []
        self.over_budget: list[int] = []
        self.max_overshoot = 0
        self.drift: list[float] = []
        self.structure = Counter()
        self.structure_turns = 0
        self.system_changes = 0
        self.prefix_rows: list[dict[str, Any]] = []
        self.constraint_hits = 0
        self.constraint_text_hits = 0
        self.latest_user_misses: list[int] = []
        self.summarizer_tokens = 0
        self.model_summaries = SummaryTally()
        self.compactions: int | None = None
        self.engine_ms: dict[int, float] = {}
        self.retrieval_tokens = 0
        self.results: dict[tuple[int, str], str] = {}
        self._previous: list[str] | None = None
        self._previous_tokens = 0
        self._previous_system: str | None = None
        self._previous_tools: list[dict[str, Any]] | None = None

    def tokens_of(self, normalized: dict[str, Any], key: str) -> int:
        cached = self._token_cache.get(key)
        if cached is None:
            cached = self._token_cache[key] = int(self.count(normalized))
        return cached

    def measure(self, prompt: list[Any]) -> tuple[list[dict[str, Any]], list[str], list[int]]:
        """Normalized messages, their canonical strings and token counts (a hook: the in-process
        harness memoizes it per message object, since most messages repeat turn after turn)."""
        normalized = [normalize_message(m) if isinstance(m, dict) else {"role": None, "content": m} for m in prompt]
        keys = [canonical(m) for m in normalized]
        tokens = [self.tokens_of(m, k) for m, k in zip(normalized, keys, strict=True)]
        return normalized, keys, tokens

    def add_turn(self, line: dict[str, Any], where: str) -> None:
        turn = int(line["turn"])
        prompt = line["prompt"]
        if not isinstance(prompt, list):
            raise SessionFormatError(f"{where}: 'prompt' must be a list of messages.")
        normalized, keys, tokens = self.measure(prompt)
        tools = line.get("tools") or None
        tool_tokens = self.count_tools(tools) if tools else 0
        total = sum(tokens) + tool_tokens
        self.turns_seen.append(turn)
        self.prompt_tokens.append(total)
        if isinstance(line.get("keepalive"), list):
            self.keepalive[turn] = [float(x) for x in line["keepalive"]]
        # Budget.
        overshoot = total + self.reserve - self.window
        if overshoot > 0:
            self.over_budget.append(turn)
            self.max_overshoot = max(self.max_overshoot, overshoot)
        if isinstance(line.get("tokens"), (int, float)) and total:
            self.drift.append((line["tokens"] - total) / total)
        # Structure.
        issues = check_structure(normalized)
        self.structure.update(issues)
        if any(issues.get(k) for k in ERROR_KEYS):
            self.structure_turns += 1
        system = keys[0] if normalized and normalized[0].get("role") == "system" else None
        if self._previous is not None and system != self._previous_system:
            self.system_changes += 1
        self._previous_system = system
        # Prefix.
        if self._previous is not None:
            o = overlap(self._previous, keys, tokens)
            # The tool schemas come first in a request (Anthropic caches tools, then system, then
            # messages; OpenAI any prefix): unchanged since the previous request, they are read
            # from the cache too. (Before, they were billed uncached on every request: 2,214 tokens
            # x 1.25 per request for every contender, ~1.1 M units per 400-turn session.)
            same_tools = tool_tokens if tools is not None and tools == self._previous_tools else 0
            self.prefix_rows.append(
                {
                    "turn": turn,
                    "prompt": sum(tokens),
                    "lcp_openai": o.lcp_tokens,
                    "lcp_anthropic": o.boundary_tokens,
                    "tools_cached": same_tools,
                    "break": not o.previous_is_prefix,
                    "deep_break": o.lcp_tokens < DEEP_BREAK_SHARE * self._previous_tokens,
                }
            )
        self._previous, self._previous_tokens = keys, sum(tokens)
        self._previous_tools = tools
        # Retention.
        text = prompt_text(normalized)
        for probe in self.due.get(turn, ()):
            probe["turn_seen"] = True
            probe["in_prompt"] = bool(probe["pattern"].search(text))
            probe["stale"] = bool(probe["old"] is not None and probe["old"].search(text))
        if self.constraint_pattern is not None and self.constraint_pattern.search(text):
            self.constraint_hits += 1
        if self.constraint_text and self.constraint_text in text:
            self.constraint_text_hits += 1
        if any(piece not in text for piece in self.latest_user.get(turn, [])):
            self.latest_user_misses.append(turn)
        # Engine-side figures.
        self.summarizer_tokens += _find_key(line.get("events", []), "summarizer_tokens")
        self.model_summaries.add_events(line.get("events"))
        if isinstance(line.get("summarizer_tokens"), (int, float)):
            self.summarizer_tokens += line["summarizer_tokens"]
        claimed = _claimed_compaction(line)
        if claimed is not None:
            self.compactions = (self.compactions or 0) + int(claimed)
        if isinstance(line.get("engine_ms"), (int, float)):
            self.engine_ms[turn] = float(line["engine_ms"])

    def add_probe(self, line: dict[str, Any]) -> None:
        result = line.get("result")
        result = "" if result is None else result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        key = (int(line["turn"]), str(line["query"]))
        self.results[key] = self.results.get(key, "") + result
        if result:
            self.retrieval_tokens += self.count({"role": "tool", "content": result})

    # ------------------------------------------------------------------ figures

    def retention(self) -> dict[str, Any]:
        for probe in self.probes:
            result = self.results.get((probe["turn"], probe["query"]), "")
            probe["in_result"] = bool(result and probe["pattern"].search(result))
            if probe["old"] is not None and result and probe["old"].search(result):
                probe["stale"] = True

        def block(probes: list[dict[str, Any]]) -> dict[str, Any]:
            n = len(probes)
            return {
                "probes": n,
                "r_verbatim": _ratio(sum(p["in_prompt"] for p in probes), n),
                "r_1": _ratio(sum(p["in_prompt"] or p["in_result"] for p in probes), n),
            }

        by_lag = defaultdict(list)
        by_carrier = defaultdict(list)
        cells = defaultdict(list)
        for probe in self.probes:
            by_lag[probe["lag"]].append(probe)
            by_carrier[probe["carrier"]].append(probe)
            cells[(probe["carrier"], probe["lag"])].append(probe)
        cell_r1 = [block(c)["r_1"] for c in cells.values() if c]
        n_turns = len(self.turns_seen)
        by_format: dict[str, list[dict[str, Any]]] = defaultdict(list)
        by_format_lag: dict[str, list[dict[str, Any]]] = defaultdict(list)
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for probe in self.probes:
            if probe["format"] is None:
                continue
            by_format[probe["format"]].append(probe)
            by_format_lag[f"{probe['format']}@{probe['lag']}"].append(probe)
            by_kind["named" if probe["named"] else "not named"].append(probe)
            if probe["shape_break"] is not None:
                by_kind["breaks shape" if probe["shape_break"] else "keeps shape"].append(probe)
        formats = (
            {
                "by_format": {k: block(v) for k, v in sorted(by_format.items())},
                "by_format_lag": {k: block(v) for k, v in sorted(by_format_lag.items())},
                "by_kind": {k: block(v) for k, v in sorted(by_kind.items())},
            }
            if by_format
            else {}
        )
        return {
            **formats,
            **block(self.probes),
            "r_1_composite": _ratio(sum(cell_r1), len(cell_r1)),
            "by_lag": {str(k): block(v) for k, v in sorted(by_lag.items())},
            "by_carrier": {str(k): block(v) for k, v in sorted(by_carrier.items())},
            # Lost probes where the superseded value was visible (prompt or recall): a wrong answer, not a gap.
            "stale": sum(p["stale"] and not (p["in_prompt"] or p["in_result"]) for p in self.probes),
            "probes_without_turn": sum(not p["turn_seen"] for p in self.probes),
            "lost": [
                {"turn": p["turn"], "lag": p["lag"], "carrier": p["carrier"], "needle": p["needle"]}
                for p in self.probes
                if not (p["in_prompt"] or p["in_result"])
            ][:20],
            "constraint_share": _ratio(self.constraint_hits, n_turns) if self.constraint_pattern else None,
            "constraint_text_share": _ratio(self.constraint_text_hits, n_turns) if self.constraint_text else None,
            "latest_user_share": _ratio(n_turns - len(self.latest_user_misses), n_turns),
            "latest_user_missing_turns": self.latest_user_misses[:20],
        }

    def prefix(self) -> dict[str, Any]:
        rows = self.prefix_rows
        total = sum(r["prompt"] for r in rows)

        def granularity(key: str) -> dict[str, Any]:
            ratios = [r[key] / r["prompt"] for r in rows if r["prompt"]]
            return {
                "token_weighted": _ratio(sum(r[key] for r in rows), total),
                "mean": _ratio(sum(ratios), len(ratios)),
            }

        return {
            "turns_compared": len(rows),
            "openai": granularity("lcp_openai"),
            "anthropic": granularity("lcp_anthropic"),
            "breaks": sum(r["break"] for r in rows),
            "deep_breaks": sum(r["deep_break"] for r in rows),
            "break_turns": [r["turn"] for r in rows if r["break"]][:30],
            "compactions": self.compactions,
            "system_prompt_changes": self.system_changes,
        }

    def cost(self, retention: dict[str, Any]) -> dict[str, Any]:
        read = PRICES["cache_read"]

        def openai_cacheable(lcp: int) -> int:
            return 0 if lcp < OPENAI_MIN_CACHED else lcp // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP

        rows = {r["turn"]: r for r in self.prefix_rows}
        cached_a = {turn: r["lcp_anthropic"] + r["tools_cached"] for turn, r in rows.items()}
        cached_o = {turn: openai_cacheable(r["lcp_openai"] + r["tools_cached"]) for turn, r in rows.items()}
        turns, totals, times = self.turns_seen, self.prompt_tokens, self.turn_at
        bill_a = bill(
            "anthropic",
            turns,
            totals,
            cached_a,
            times,
            self.keepalive,
            read=read,
            uncached=PRICES["anthropic_uncached"],
        )
        bill_o = bill(
            "openai",
            turns,
            totals,
            cached_o,
            times,
            self.keepalive,
            read=read,
            uncached=PRICES["openai_uncached"],
            cacheable=openai_cacheable,
        )
        anthropic, openai = bill_a.cost, bill_o.cost
        lost = sum(not (p["in_prompt"] or p["in_result"]) for p in self.probes)
        penalty = lost * self.refetch_penalty
        extra = self.summarizer_tokens + self.retrieval_tokens
        return {
            "prompt_tokens": sum(self.prompt_tokens),
            "summarizer_tokens": self.summarizer_tokens,
            "retrieval_tokens": self.retrieval_tokens,
            "lost_probes": lost,
            "refetch_penalty_tokens": penalty,
            "anthropic": round(anthropic, 1),
            "openai": round(openai, 1),
            "total_anthropic": round(anthropic + extra + penalty * PRICES["anthropic_uncached"], 1),
            "total_openai": round(openai + extra + penalty * PRICES["openai_uncached"], 1),
            "prices": dict(PRICES, refetch_penalty_tokens=self.refetch_penalty),
            # Pauses past the cache TTL (bench/cache_ttl.py): turns billed cold, and keep-alive
            # probes (their cost is inside `anthropic` / `openai` too).
            "cache_ttl": {
                "paused_s": sum(self.gaps.values()),
                "cold_turns_anthropic": bill_a.cold_turns,
                "cold_turns_openai": bill_o.cold_turns,
                "cold_tokens_anthropic": bill_a.cold_tokens,
                "cold_tokens_openai": bill_o.cold_tokens,
                "keepalive_probes": bill_a.probes,
                "keepalive_anthropic": round(bill_a.probe_cost, 1),
                "keepalive_openai": round(bill_o.probe_cost, 1),
            },
        }

    def timing(self) -> dict[str, Any]:
        if not self.engine_ms:
            return {"available": False}
        values = list(self.engine_ms.values())
        buckets: dict[str, Any] = {}
        xs: list[float] = []
        ys: list[float] = []
        for length in TIMING_BUCKETS:
            turns = [t for t in self.engine_ms if length - TIMING_WINDOW < t <= length]
            if len(turns) < TIMING_MIN_SAMPLES:
                continue
            samples = [self.engine_ms[t] for t in turns]
            history = sum(self.history_size.get(t, 0) for t in turns) / len(turns)
            p50 = percentile(samples, 0.5)
            buckets[str(length)] = {
                "turns": len(turns),
                "p50_ms": p50,
                "p95_ms": percentile(samples, 0.95),
                "max_ms": max(samples),
                "history_messages": round(history, 1),
            }
            if p50 and p50 > 0 and history > 0:
                xs.append(math.log(history))
                ys.append(math.log(p50))
        return {
            "available": True,
            "turns": len(values),
            "p50_ms": percentile(values, 0.5),
            "p95_ms": percentile(values, 0.95),
            "max_ms": max(values),
            "buckets": buckets,
            "alpha": _slope(xs, ys),
        }

    def report(self) -> dict[str, Any]:
        missing = sorted(set(self.session_turns) - set(self.turns_seen))
        retention = self.retention()
        n = len(self.turns_seen)
        return {
            "turns": n,
            "missing_turns": missing[:30],
            "missing_turn_count": len(missing),
            "budget": {
                "window": self.window,
                "output_reserve": self.reserve,
                "over_budget_turns": len(self.over_budget),
                "over_budget_list": self.over_budget[:30],
                "max_overshoot_tokens": self.max_overshoot,
                "max_prompt_tokens": max(self.prompt_tokens, default=0),
                "mean_prompt_tokens": _ratio(sum(self.prompt_tokens), n),
                "engine_count_drift_mean": _ratio(sum(self.drift), len(self.drift)),
            },
            "structure": {
                **{k: self.structure.get(k, 0) for k in ERROR_KEYS},
                "same_role_runs": self.structure.get("same_role_runs", 0),
                "empty_messages": self.structure.get("empty_messages", 0),
                "turns_with_errors": self.structure_turns,
                "system_prompt_changes": self.system_changes,
            },
            "prefix": self.prefix(),
            "retention": retention,
            "cost": self.cost(retention),
            "timing": self.timing(),
            "model_summaries": self.model_summaries.as_dict(),
        }


def score(
    out_path: str | Path,
    session_path: str | Path,
    answers_path: str | Path | None = None,
    *,
    window: int,
    output_reserve: int,
    count: MessageCounter | None = None,
    count_tools: Callable[[list[dict[str, Any]]], int] | None = None,
    refetch_penalty: int = REFETCH_PENALTY_TOKENS,
) -> dict[str, Any]:
    """All figures of one OUT file against its session and answers (default: `<session>.answers.json`)."""
    if window <= 0 or output_reserve < 0:
        raise ValueError("window must be positive and the output reserve non-negative.")
    answers = read_answers(answers_path or answers_path_for(session_path))
    scorer = _Scorer(
        Path(session_path),
        answers,
        window=window,
        output_reserve=output_reserve,
        count=count or default_count(),
        count_tools=count_tools or (default_count_tools if count is None else _tools_with(count)),
        refetch_penalty=refetch_penalty,
    )
    last_turn = None
    for number, line in read_jsonl(out_path):
        where = f"{out_path}:{number}"
        if "prompt" in line and "turn" in line:
            if last_turn is not None and int(line["turn"]) <= last_turn:
                raise SessionFormatError(
                    f"{where}: turn {line['turn']} is not after turn {last_turn}; "
                    "OUT turn lines must be in increasing order."
                )
            last_turn = int(line["turn"])
            scorer.add_turn(line, where)
        elif "query" in line and "turn" in line:
            scorer.add_probe(line)
        else:
            raise SessionFormatError(
                f"{where}: neither a turn line (turn + prompt) nor a probe line (turn + query); "
                "check the replay output format."
            )
    report = scorer.report()
    report["inputs"] = {
        "out": str(out_path),
        "session": str(session_path),
        "session_sha256": answers.get("session_sha256"),
        "kind": answers.get("kind"),
        "seed": answers.get("seed"),
    }
    return report


def _tools_with(count: MessageCounter) -> Callable[[list[dict[str, Any]]], int]:
    """With a custom message counter, count the tools schema as one message of its JSON."""
    return lambda tools: count({"role": "system", "content": json.dumps(tools, sort_keys=True)})


# --------------------------------------------------------------------------- report


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def markdown(report: dict[str, Any]) -> str:
    b, s, p, r, c, t = (report[k] for k in ("budget", "structure", "prefix", "retention", "cost", "timing"))
    rows = [
        ("turns scored", report["turns"]),
        ("missing turns", report["missing_turn_count"]),
        ("B4 over-budget turns", b["over_budget_turns"]),
        ("B4 max overshoot (tokens)", b["max_overshoot_tokens"]),
        ("max / mean prompt tokens", f"{_fmt(b['max_prompt_tokens'])} / {_fmt(b['mean_prompt_tokens'])}"),
        ("B4 orphan results", s["orphan_results"]),
        ("B4 dangling calls", s["dangling_calls"]),
        ("B4 role-order errors", s["role_order_errors"]),
        ("B4 duplicate call ids", s["duplicate_call_ids"]),
        ("B4 turns with structure errors", s["turns_with_errors"]),
        ("system prompt changes", s["system_prompt_changes"]),
        (
            "B3 prefix, OpenAI-like (token-weighted / mean)",
            f"{_fmt(p['openai']['token_weighted'])} / {_fmt(p['openai']['mean'])}",
        ),
        (
            "B3 prefix, Anthropic-like (token-weighted / mean)",
            f"{_fmt(p['anthropic']['token_weighted'])} / {_fmt(p['anthropic']['mean'])}",
        ),
        (
            "B3 prefix breaks (deep) / compactions claimed",
            f"{p['breaks']} ({p['deep_breaks']}) / {_fmt(p['compactions'])}",
        ),
        ("B2 probes", r["probes"]),
        ("B2 R_verbatim", r["r_verbatim"]),
        ("B2 R_1", r["r_1"]),
        ("B2 R_1 composite (carrier x lag)", r["r_1_composite"]),
    ]
    rows += [
        (f"B2 R_verbatim / R_1 at lag {lag}", f"{_fmt(v['r_verbatim'])} / {_fmt(v['r_1'])} (n={v['probes']})")
        for lag, v in r["by_lag"].items()
    ]
    rows += [
        ("B2 stale (old value only)", r["stale"]),
        ("B2 constraint in every prompt (share)", r["constraint_share"]),
        ("B2 latest user message verbatim (share)", r["latest_user_share"]),
        ("B5 prompt tokens", c["prompt_tokens"]),
        ("B5 summarizer / retrieval tokens", f"{_fmt(c['summarizer_tokens'])} / {_fmt(c['retrieval_tokens'])}"),
        ("B5 re-fetch penalty (lost probes)", f"{_fmt(c['refetch_penalty_tokens'])} ({c['lost_probes']})"),
        ("B5 cost, Anthropic-like (total)", c["total_anthropic"]),
        ("B5 cost, OpenAI-like (total)", c["total_openai"]),
    ]
    summaries = report.get("model_summaries") or {}
    if summaries.get("available"):
        rows += [("B5 model summaries", summary_line(summaries))]
    if t.get("available"):
        rows += [("B1 engine ms p50 / p95 / max", f"{_fmt(t['p50_ms'])} / {_fmt(t['p95_ms'])} / {_fmt(t['max_ms'])}")]
        rows += [
            (
                f"B1 at {length} turns p50 / p95 (H={v['history_messages']})",
                f"{_fmt(v['p50_ms'])} / {_fmt(v['p95_ms'])}",
            )
            for length, v in t["buckets"].items()
        ]
        rows += [("B1 growth exponent alpha", t["alpha"])]
    lines = ["| figure | value |", "|---|---|"]
    lines += [f"| {name} | {_fmt(value)} |" for name, value in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.score", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the replay OUT file (JSON lines)")
    parser.add_argument("--session", required=True, help="the replayed session (JSON lines)")
    parser.add_argument("--answers", help="answers sidecar (default: <session>.answers.json)")
    parser.add_argument("--window", type=int, required=True, help="context window in tokens")
    parser.add_argument("--reserve", type=int, default=4096, help="output tokens reserved per request")
    parser.add_argument("--penalty", type=int, default=REFETCH_PENALTY_TOKENS, help="re-fetch tokens per lost probe")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    args = parser.parse_args(argv)
    try:
        report = score(
            args.out,
            args.session,
            args.answers,
            window=args.window,
            output_reserve=args.reserve,
            refetch_penalty=args.penalty,
        )
    except (SessionFormatError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=1) if args.json else markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
