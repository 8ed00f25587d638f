"""B1 as main-thread CPU time (docs/benchmarks.md): `python scripts/b1_cpu.py`.

Why CPU time: the wall time of a turn on a box shared with the test suite measures the box. This
replays the seeded coding workload (800 turns, seed 1; `--seed` for another session of the same
kind, which the engine was not profiled on) at a 64k window with the `null`
summarizer through `myrm replay` and sums `time.thread_time` over every `ContextEngine.assemble`
of each turn; it prints p50 / p95 / p99 / max over turns 401-800 and the mean of the turns that
ran an event inside a request, and apart from them the CPU of the idle step after each turn
(`ContextEngine.compact_ahead` and `EventWarmup.warm_now`, which the agent runs while the user
reads: not in the turn's time, but not free either) and of the safety net's events a request
owed (`ContextEngine.pay_owed`, which the agent runs in a worker thread while the model answers).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import myrm_tui  # noqa: F401  (offline environment first)
from bench.workload import generate
from myrm_tui import replay
from myrm_tui.context.compaction.event import CompactionEvent
from myrm_tui.context.compaction.event_warmup import EventWarmup
from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.prompt import AssembledPrompt
from myrm_tui.context.window.config import DEFAULT_CONFIG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=800)
    parser.add_argument("--window", type=int, default=64_000)
    parser.add_argument("--from-turn", type=int, default=401)
    parser.add_argument(
        "--seed", type=int, default=1, help="the workload's seed (B1 is defined on 1; report others beside it)"
    )
    parser.add_argument("--top", type=int, default=0, help="also list the N heaviest turns (turn, CPU ms, events)")
    parser.add_argument("--json", type=Path, help="also write the figures here (python -m bench latency reads them)")
    parser.add_argument(
        "--warmup-to-end",
        action="store_true",
        help="run each idle warm-up to its end before the next turn (not in a thread the turn cancels): "
        "the events' CPU then no longer depends on thread timing, to compare two trees",
    )
    parser.add_argument(
        "--while-answering",
        action="store_true",
        help="with the compact_while_answering setting: the safety net's event runs while the model "
        "answers the request that crossed it, not inside it",
    )
    args = parser.parse_args()
    spent = [0.0]  # CPU seconds of the current turn's assembles
    events = [0]
    assemble = ContextEngine.assemble

    def timed(self: ContextEngine, inp: TurnInput) -> AssembledPrompt:
        started, ran = time.thread_time(), self.stats.events
        out = assemble(self, inp)
        spent[0] += time.thread_time() - started
        events[0] += self.stats.events - ran  # run inside this request (not one it only reports)
        return out

    per_turn: list[tuple[int, float, int]] = []
    idle = [0.0]  # CPU seconds of the current turn's idle warm-up
    idle_per_turn: list[tuple[int, float]] = []
    warm = EventWarmup.warm_now  # in the worker thread `warm` hands it to: its own thread time

    def timed_warm(self: EventWarmup, inp: TurnInput, stop: threading.Event | None = None) -> int:
        started = time.thread_time()
        out = warm(self, inp, stop)
        idle[0] += time.thread_time() - started
        return out

    ahead_per_turn: list[tuple[int, float]] = []  # an idle step's compaction: (turn, CPU ms)
    ahead_ms: list[float] = []
    compact_ahead = ContextEngine.compact_ahead  # in the worker thread `compact_ahead_idle` hands it to

    def timed_ahead(self: ContextEngine, inp: TurnInput) -> CompactionEvent | None:
        started = time.thread_time()
        out = compact_ahead(self, inp)
        if out is not None:
            ahead_ms.append((time.thread_time() - started) * 1000)
        return out

    answering_ms: list[float] = []  # the event a request owed, run while the model answered
    pay_owed = ContextEngine.pay_owed  # in the worker thread the agent hands it to

    def timed_pay(self: ContextEngine) -> CompactionEvent | None:
        started = time.thread_time()
        out = pay_owed(self)
        if out is not None:
            answering_ms.append((time.thread_time() - started) * 1000)
        return out

    answering_per_turn: list[tuple[int, float]] = []
    line = replay.ReplaySession.line

    async def timed_line(self: replay.ReplaySession, record: dict[str, Any]) -> dict[str, Any]:
        spent[0], events[0], idle[0] = 0.0, 0, 0.0
        ahead_ms.clear()
        answering_ms.clear()
        out = await line(self, record)
        if "probe" not in record:
            ahead_per_turn.extend((int(record.get("turn") or 0), m) for m in ahead_ms)
            answering_per_turn.extend((int(record.get("turn") or 0), m) for m in answering_ms)
            per_turn.append((int(record.get("turn") or 0), spent[0] * 1000, events[0]))
            idle_per_turn.append((int(record.get("turn") or 0), idle[0] * 1000))
        return out

    ContextEngine.assemble = timed  # type: ignore[method-assign]
    EventWarmup.warm_now = timed_warm  # type: ignore[method-assign]
    if args.warmup_to_end:

        async def warm_to_end(self: EventWarmup, inp: TurnInput) -> int:
            return self.warm_now(inp)  # no await inside: the next turn cannot cancel it midway

        EventWarmup.warm = warm_to_end  # type: ignore[method-assign]
    ContextEngine.compact_ahead = timed_ahead  # type: ignore[method-assign]
    ContextEngine.pay_owed = timed_pay  # type: ignore[method-assign]
    replay.ReplaySession.line = timed_line  # type: ignore[method-assign,assignment]
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "coding.jsonl"
        lines, _answers = generate("coding", args.turns, args.seed)
        session.write_text("".join(json.dumps(x) + "\n" for x in lines))
        with (Path(tmp) / "out.jsonl").open("w") as handle:
            config = dataclasses.replace(DEFAULT_CONFIG, compact_while_answering=args.while_answering)
            options = replay.ReplayOptions(window=args.window, summarizer="null", config=config)
            replay.run_replay(session, handle, options)
    ms = [m for turn, m, _ in per_turn if turn >= args.from_turn]
    event_ms = [m for turn, m, e in per_turn if turn >= args.from_turn and e]
    q = statistics.quantiles(ms, n=100)
    print(
        f"turns {len(ms)}: p50 {statistics.median(ms):.2f} / p95 {q[94]:.2f} / p99 {q[98]:.2f} / "
        f"max {max(ms):.2f} ms CPU, mean {statistics.mean(ms):.2f}; compaction turns {len(event_ms)}, "
        f"mean {statistics.mean(event_ms) if event_ms else 0.0:.1f} ms"
    )
    if args.top:
        heaviest = sorted((row for row in per_turn if row[0] >= args.from_turn), key=lambda row: -row[1])
        print("heaviest turns:", ", ".join(f"{t} {m:.1f} ms ({e} events)" for t, m, e in heaviest[: args.top]))
    ahead = [m for turn, m in ahead_per_turn if turn >= args.from_turn]
    ahead_mean = statistics.mean(ahead) if ahead else 0.0
    print(
        f"compaction ahead at the idle step: {len(ahead)} events, mean {ahead_mean:.1f} ms, "
        f"max {max(ahead, default=0.0):.1f} ms CPU (not in a turn's time)"
    )
    answering = [m for turn, m in answering_per_turn if turn >= args.from_turn]
    print(
        f"the safety net's event while the model answered: {len(answering)} events, "
        f"mean {statistics.mean(answering) if answering else 0.0:.1f} ms, max {max(answering, default=0.0):.1f} ms CPU "
        "(in a worker thread, not in a turn's time)"
    )
    warm_ms = [m for turn, m in idle_per_turn if turn >= args.from_turn]
    busy = sorted(m for m in warm_ms if m > 0)
    print(
        f"idle warm-up after the turn: {len(busy)} of {len(warm_ms)} turns, mean {statistics.mean(warm_ms):.2f} ms, "
        f"max {max(warm_ms, default=0.0):.1f} ms, total {sum(warm_ms) / 1000:.2f} s CPU"
    )
    if args.json is not None:
        figures = {
            "turns": len(ms),
            "p50_ms": statistics.median(ms),
            "p95_ms": q[94],
            "p99_ms": q[98],
            "max_ms": max(ms),
            "compaction_turns": len(event_ms),
            "compaction_mean_ms": statistics.mean(event_ms) if event_ms else 0.0,
            "ahead_events": len(ahead),
            "ahead_mean_ms": ahead_mean,
            "ahead_max_ms": max(ahead, default=0.0),
            "answering_events": len(answering),
            "answering_mean_ms": statistics.mean(answering) if answering else 0.0,
            "answering_max_ms": max(answering, default=0.0),
            "idle_warm_mean_ms": statistics.mean(warm_ms) if warm_ms else 0.0,
            "idle_warm_max_ms": max(warm_ms, default=0.0),
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
