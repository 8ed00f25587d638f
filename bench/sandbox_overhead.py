"""`python -m bench.sandbox_overhead`: what the bwrap sandbox costs per bash call.

Runs `true` N times (default 50) through the real Bash tool with the sandbox on
(workspace-write, in a workspace that is a git repo with a .myrm store, as in real use) and off,
interleaved so machine load hits both alike, and prints median / p90 / min per mode and the
median difference. A second table times the bare processes (`bash -c true` vs the same under
the bwrap arguments the tool builds) to separate bwrap's own cost from the tool's bookkeeping
(environment filtering, the protected-path plan, ending the call's processes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _workspace(root: Path) -> Path:
    from myrm_tui.store import Store

    ws = root / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    Store.open(ws).close()
    return ws.resolve()


async def _tool_times(ws: Path, runs: int) -> dict[str, list[float]]:
    from myrm_tui.agent.tools.base import ToolContext
    from myrm_tui.agent.tools.shell.bash import Bash
    from myrm_tui.settings.settings import Settings

    contexts = {
        mode: ToolContext(ws, Settings().with_values(sandbox=mode), None) for mode in ("workspace-write", "off")
    }
    times: dict[str, list[float]] = {mode: [] for mode in contexts}
    tool = Bash()
    for ctx in contexts.values():  # warm-up: the bwrap probe and first-use costs
        await tool.run({"command": "true"}, ctx)
    for _ in range(runs):
        for mode, ctx in contexts.items():
            started = time.perf_counter()
            result = await tool.run({"command": "true"}, ctx)
            times[mode].append(time.perf_counter() - started)
            if result.status != "ok":
                raise SystemExit(f"`true` failed with sandbox={mode}: {result.content}")
    return times


def _process_times(ws: Path, runs: int) -> dict[str, list[float]]:
    from myrm_tui.agent.sandbox import plan_for, probe_bwrap

    probe = probe_bwrap()
    bare = ["bash", "-c", "true"]
    variants = {"bash -c true": bare}
    if probe.works and probe.path:
        variants["bwrap … bash -c true"] = plan_for(ws, "workspace-write", False).bwrap_argv(probe.path, bare)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, argv in variants.items():
            started = time.perf_counter()
            subprocess.run(argv, cwd=ws, check=True)
            times[name].append(time.perf_counter() - started)
    return times


def _table(times: dict[str, list[float]], baseline: str) -> str:
    rows = ["| variant | runs | median ms | p90 ms | min ms | median − baseline ms |", "|---|---|---|---|---|---|"]
    base = statistics.median(times[baseline]) if times.get(baseline) else 0.0
    for name, values in times.items():
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        median = statistics.median(ordered)
        rows.append(
            f"| {name} | {len(values)} | {median * 1000:.1f} | {p90 * 1000:.1f} | {ordered[0] * 1000:.1f} | "
            f"{(median - base) * 1000:+.1f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sandbox_overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    from myrm_tui.agent.sandbox import probe_bwrap

    probe = probe_bwrap()
    print(f"bwrap: {probe.path} ({probe.version}); works: {probe.works} {probe.problem}".rstrip())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}\n")
    with tempfile.TemporaryDirectory(prefix="myrm-overhead-") as tmp:
        ws = _workspace(Path(tmp))
        tool = asyncio.run(_tool_times(ws, args.runs))
        print(f"## Bash tool, `true`, {args.runs} calls each (interleaved)\n")
        print(_table({f"sandbox={m}": v for m, v in tool.items()}, "sandbox=off"))
        print(f"\n## Bare processes, {args.runs} runs each\n")
        print(_table(_process_times(ws, args.runs), "bash -c true"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
