"""T2 streaming: does the display keep pace with a fast model, at what cost per frame and per token?

The real app (`MyrmApp` under `App.run_test`, 120×40) streams a scripted reply at a nominal rate
(200, 1,000 and 2,000 tokens/s: a chunk every STREAM_CHUNK_INTERVAL_MS, of rate × 4 characters
per second; the scripted provider keeps to its schedule whether or not the app keeps up, like a
server). Two replies: the coding answer of `markdown_reply` for STREAM_SECONDS at each rate (so
its length grows with the rate), and a reply of LONG_REPLY_BLOCKS top-level blocks with long code
fences, long tables and very long single lines (`long_reply`).

Measured per run, from frames (each `Screen._on_timer_update`, timed in wall and in thread CPU):
- rate reached: the reply's tokens over the time from the first frame that showed any of it to
  the first frame that showed all of it (the user reads at this rate);
- display lag: the most the screen was behind what had arrived, in seconds of the nominal rate;
- frames over FRAME_BUDGET_MS, frame work (wall and CPU), key → next frame showing it (a letter
  typed every STREAM_KEY_PERIOD_S while the reply streams);
- CPU (the process: every thread) per 1,000 tokens over the streaming phase;
- garbage collector passes by generation, split into the turn and after it.

Run: `python -m bench.tui_bench --only stream [--repeat 3] [--stream-seconds S]`. Nothing here
asserts a timing.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.tui_bench import (
    CHILD_TIMEOUT_S,
    FRAME_BUDGET_MS,
    HEADLESS_SIZE,
    STREAM_KEY_PERIOD_S,
    FrameClock,
    GcClock,
    fmt,
    key_latency,
    loop_probe,
    markdown_reply,
    markdown_section,
    now,
    print_table,
    scripted_model,
    summary,
    wait_for,
)

# Nominal rates: a fast cloud model, and the fast providers' range (500-2,000 tokens/s).
STREAM_RATES = (200, 1_000, 2_000)
# One chunk every 5 ms at every rate (bigger chunks at higher rates): the TUI's cost per chunk is
# one list append; what is measured is the cost per token and per frame.
STREAM_CHUNK_INTERVAL_MS = 5
CHARS_PER_TOKEN = 4
# The top-level blocks of the long reply: a long answer (hundreds of blocks).
LONG_REPLY_BLOCKS = 300
# After the reply is whole on screen: long enough for the collection the turn runner schedules
# after a turn (IDLE_COLLECT_DELAY_S, 0.5 s), so its pause is reported, apart from the turn's.
AFTER_TURN_S = 1.2


def chunk_chars(rate: int) -> int:
    return max(1, round(rate * CHARS_PER_TOKEN * STREAM_CHUNK_INTERVAL_MS / 1000))


def long_reply(blocks: int = LONG_REPLY_BLOCKS) -> str:
    """`blocks` top-level blocks: coding-answer sections (heading, prose, list, fence, table) with,
    every 14 sections, an 80-line code fence, a 30-row table and a 3,500-character single line."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt().enable("table")
    parts: list[str] = []
    section = 0
    while True:
        parts.append(markdown_section(section))
        if section % 14 == 3:
            body = "".join(f"    total_{n} = compute(step={n}, scale={n * 3})  # line {n}\n" for n in range(80))
            parts.append(f"```python\ndef long_{section}():\n{body}    return total_0\n```\n\n")
        if section % 14 == 7:
            rows = "".join(f"| case {n} | {n * 7} ms | {n * 3} ms | {'yes' if n % 2 else 'no'} |\n" for n in range(30))
            parts.append(f"| case | before | after | cached |\n|---|---|---|---|\n{rows}\n")
        if section % 14 == 11:
            words = " ".join(f"word{n}" for n in range(500))
            parts.append(f"A very long line without a break: {words}.\n\n")
        text = "".join(parts)
        count = sum(1 for t in parser.parse(text) if t.level == 0 and t.nesting >= 0 and t.map)
        if count >= blocks:
            return text
        section += 1


def _shown_chars(message: Any) -> int:
    """How much of the reply the screen shows. Works on the tree before this change too (its
    segments held what was written to them) so the same bench measures both."""
    if not message.streaming:
        return len(message.text)
    segments = getattr(message, "_segment_texts", None)
    if segments is not None:
        return sum(len(text) for text in segments)
    return len(message.markdown.source)


async def measure_stream(reply: str, rate: int, idle_s: float) -> dict[str, Any]:
    """Stream `reply` at a nominal `rate` tokens/s into the real app and watch it (module doc)."""
    import gc

    from myrm_tui.settings import Settings
    from myrm_tui.store import Store
    from myrm_tui.tui.app import MyrmApp
    from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage

    tokens = len(reply) / CHARS_PER_TOKEN
    with tempfile.TemporaryDirectory(prefix="tui-stream-") as tmp:
        root = Path(tmp)
        os.environ.setdefault("MYRM_CONFIG_DIR", str(root / "config"))
        turn = {"text": reply, "chunk_size": chunk_chars(rate), "delay_ms": STREAM_CHUNK_INTERVAL_MS}
        model = scripted_model(root, [turn])
        workspace = root / "ws"
        workspace.mkdir()
        store = Store.open(workspace)
        frames = FrameClock()
        frames.install()  # before the app starts: each screen binds its refresh timer at mount
        app = MyrmApp(workspace, Settings().with_values(model=model), store=store, watch_themes=False)
        # per frame: (end, thread CPU ms, process CPU s, chars shown, chars received)
        trace: list[tuple[float, float, float, int, int]] = []
        try:
            async with app.run_test(size=HEADLESS_SIZE):
                screen = app.chat_screen
                await wait_for(screen.ready.is_set, CHILD_TIMEOUT_S, "engine warm-up")
                await asyncio.sleep(0.3)
                gc.collect()  # every run starts from the same heap, not the last run's garbage
                idle: list[float] = []
                stop = asyncio.Event()
                task = asyncio.create_task(loop_probe(stop, idle))
                await asyncio.sleep(idle_s)
                stop.set()
                await task
                frames.durations.clear()
                frames.cpu.clear()
                frames.ends.clear()
                lateness: list[float] = []
                stop = asyncio.Event()
                probe = asyncio.create_task(loop_probe(stop, lateness))
                gc_clock = GcClock().__enter__()
                message: list[Any] = []

                def observe() -> None:
                    if not message:
                        found = screen.query(AssistantMessage)
                        if not found:
                            return
                        message.append(found.first())
                    reply_widget = message[0]
                    trace.append(
                        (
                            now(),
                            frames.cpu[-1] if frames.cpu else 0.0,
                            time.process_time(),
                            _shown_chars(reply_widget),
                            len(reply_widget.text),
                        )
                    )

                frames.observe = observe
                t_send = now()
                load = os.getloadavg()[0]
                screen.send_message("Explain the refactor step by step.", draft=None)
                turn_end: list[float] = []

                async def watch_turn() -> None:  # when the turn ended, to the poll (2 ms)
                    while screen.turn_running:
                        await asyncio.sleep(0.002)
                    turn_end.append(now())

                watcher = asyncio.create_task(watch_turn())
                await wait_for(lambda: message, 60, "reply widget")
                keys: list[tuple[float, float]] = []
                lost = 0
                letters = "abcdefghijklmnopqrstuvwxyz"
                index = 0
                deadline = now() + CHILD_TIMEOUT_S * 4
                while not (trace and trace[-1][3] >= len(reply) and not message[0].streaming):
                    if now() > deadline:
                        raise TimeoutError("the reply never showed whole")
                    if trace and trace[-1][3] < len(reply):  # keys only while the reply streams
                        sample = await key_latency(app, screen.prompt, frames, letters[index % 26])
                        index += 1
                        if sample is None:
                            lost += 1
                        else:
                            keys.append(sample)
                    await asyncio.sleep(STREAM_KEY_PERIOD_S)
                await asyncio.sleep(AFTER_TURN_S)
                await watcher
                gc_clock.__exit__()
                stop.set()
                await probe
        finally:
            frames.observe = None
            frames.uninstall()
            store.close()
    return _figures(reply, tokens, rate, trace, frames, keys, lost, gc_clock, lateness, idle, t_send, turn_end[0], load)


def _figures(
    reply: str,
    tokens: float,
    rate: int,
    trace: list[tuple[float, float, float, int, int]],
    frames: FrameClock,
    keys: list[tuple[float, float]],
    lost: int,
    gc_clock: GcClock,
    lateness: list[float],
    idle: list[float],
    t_send: float,
    turn_end: float,
    load: float,
) -> dict[str, Any]:
    first = next(row for row in trace if row[3] > 0)
    whole = next(row for row in trace if row[3] >= len(reply))
    shown_s = whole[0] - first[0]
    arrived_first = next(row for row in trace if row[4] > 0)
    arrived_all = next(row for row in trace if row[4] >= len(reply))
    arrival_s = arrived_all[0] - arrived_first[0]  # to the frame that first saw all of it arrived
    chars_per_s = rate * CHARS_PER_TOKEN
    streaming = [row for row in trace if first[0] <= row[0] <= whole[0]]
    frame_ms = [d for d, end in zip(frames.durations, frames.ends, strict=True) if first[0] <= end <= whole[0]]
    frame_cpu = [c for c, end in zip(frames.cpu, frames.ends, strict=True) if first[0] <= end <= whole[0]]
    gen2_turn = [ms for gen, ms, end in gc_clock.passes if gen == 2 and t_send <= end <= turn_end]
    gen2_after = [ms for gen, ms, end in gc_clock.passes if gen == 2 and end > turn_end]
    cpu_s = whole[2] - first[2]
    return {
        "rate": rate,
        "reply_chars": len(reply),
        "reply_tokens": tokens,
        "chunk_chars": chunk_chars(rate),
        "loadavg_1m": load,
        "shown_chars": whole[3],
        "shown_s": shown_s,
        "achieved_tok_per_s": tokens / shown_s if shown_s > 0 else None,
        "arrived_tok_per_s": tokens / arrival_s if arrival_s > 0 else None,
        "target_tok_per_s": float(rate),
        "max_lag_s": max((row[4] - row[3]) / chars_per_s for row in streaming) if streaming else None,
        "cpu_s": cpu_s,
        "cpu_ms_per_1k_tokens": cpu_s * 1000 / tokens * 1000 if tokens else None,
        "frames": len(frame_ms),
        "frames_over_budget": sum(1 for d in frame_ms if d > FRAME_BUDGET_MS),
        "frame_budget_ms": FRAME_BUDGET_MS,
        "frame_ms": summary(frame_ms),
        "frame_cpu_ms": summary(frame_cpu),
        "key_to_text_ms": summary([k[0] for k in keys]),
        "key_to_frame_ms": summary([k[1] for k in keys]),
        "keys_lost": lost,
        "loop_lateness_ms": summary(lateness),
        "idle_loop_lateness_ms": summary(idle),
        "gc_pause_ms": gc_clock.report(),
        "full_gc_in_turn": len(gen2_turn),
        "full_gc_in_turn_max_ms": max(gen2_turn, default=None),
        "full_gc_after_turn": len(gen2_after),
        "full_gc_after_turn_max_ms": max(gen2_after, default=None),
    }


def measure_rates(
    seconds: float, rates: Sequence[int], long_blocks: int, repeat: int, idle_s: float, log: Callable[[str], None]
) -> dict[str, Any]:
    """Every (reply, rate) pair `repeat` times, round-robin (drift on a shared box hits all alike);
    the summary keeps each figure's median over the runs."""
    replies: dict[str, Callable[[int], str]] = {
        "coding answer": lambda rate: markdown_reply(int(seconds * rate * CHARS_PER_TOKEN)),
    }
    if long_blocks:
        long_text = long_reply(long_blocks)
        replies[f"{long_blocks}-block reply"] = lambda rate: long_text
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {name: {rate: [] for rate in rates} for name in replies}
    for round_index in range(repeat):
        for name, make in replies.items():
            for rate in rates:
                row = asyncio.run(measure_stream(make(rate), rate, idle_s))
                runs[name][rate].append(row)
                log(
                    f"  T2 {name} at {rate} tok/s, run {round_index + 1}/{repeat}: "
                    f"{fmt(row['achieved_tok_per_s'])} tok/s, {row['frames_over_budget']} slow frames"
                )
    return {
        "seconds": seconds,
        "rates": list(rates),
        "repeat": repeat,
        "chunk_interval_ms": STREAM_CHUNK_INTERVAL_MS,
        "replies": {
            name: {str(rate): _median_row(rows) for rate, rows in by_rate.items()} for name, by_rate in runs.items()
        },
        "runs": {name: {str(rate): rows for rate, rows in by_rate.items()} for name, by_rate in runs.items()},
    }


def _median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the runs (a summary's median, p95, p99 and max too)."""

    def med(values: list[Any]) -> Any:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    out: dict[str, Any] = {}
    for key, value in rows[0].items():
        if isinstance(value, dict) and all(isinstance(v, (int, float)) or v is None for v in value.values()):
            out[key] = {k: med([row[key][k] for row in rows]) for k in value}
        elif isinstance(value, dict):
            out[key] = value
        elif isinstance(value, (int, float)) or value is None:
            out[key] = med([row[key] for row in rows])
        else:
            out[key] = value
    out["runs"] = len(rows)
    return out


def print_rates(result: dict[str, Any]) -> None:
    rates = result["rates"]
    for name, by_rate in result["replies"].items():
        rows = [by_rate[str(rate)] for rate in rates]
        first = rows[0]
        sizes = ", ".join(f"{r['reply_chars']:,}" for r in rows)
        print_table(
            f"T2 streaming, {name} ({sizes} characters; "
            f"median of {first['runs']} runs; a chunk every {result['chunk_interval_ms']} ms; "
            f"load average {fmt(statistics.median(r['loadavg_1m'] for r in rows), 1)})",
            ["figure", *(f"{rate:,} tok/s" for rate in rates)],
            [
                ["rate reached, tok/s (% of nominal)"]
                + [f"{fmt(r['achieved_tok_per_s'])} ({fmt(_pct(r), 0)} %)" for r in rows],
                ["display lag, max s"] + [fmt(r["max_lag_s"], 2) for r in rows],
                [f"frames over {FRAME_BUDGET_MS:.0f} ms (of all)"]
                + [f"{fmt(r['frames_over_budget'], 0)} of {fmt(r['frames'], 0)}" for r in rows],
                ["frame work ms, p95 / max (wall)"]
                + [f"{fmt(r['frame_ms']['p95'], 1)} / {fmt(r['frame_ms']['max'], 1)}" for r in rows],
                ["frame work ms, p95 / max (CPU)"]
                + [f"{fmt(r['frame_cpu_ms']['p95'], 1)} / {fmt(r['frame_cpu_ms']['max'], 1)}" for r in rows],
                ["key → next frame ms, p95 / p99"]
                + [f"{fmt(r['key_to_frame_ms']['p95'], 1)} / {fmt(r['key_to_frame_ms']['p99'], 1)}" for r in rows],
                ["CPU ms per 1,000 tokens"] + [fmt(r["cpu_ms_per_1k_tokens"]) for r in rows],
                ["full GC passes in the turn (after it)"]
                + [
                    f"{fmt(r['full_gc_in_turn'], 0)} ({fmt(r['full_gc_after_turn'], 0)}, "
                    f"{fmt(r['full_gc_after_turn_max_ms'])} ms)"
                    for r in rows
                ],
            ],
        )


def _pct(row: dict[str, Any]) -> float | None:
    achieved = row.get("achieved_tok_per_s")
    return None if achieved is None else achieved / row["target_tok_per_s"] * 100
