"""G1 figures: myrm on the fact sessions (`bench/fact_sessions.py`), R_verbatim per format and lag.

Each session is replayed by `myrm replay` in a subprocess (the CLI a user runs; `--myrm-path`
points it at another checkout, e.g. the tree before a change) and scored by `bench/score.py`.
Figures pool the probes of the seeds given; the figures of record are on the held-out seeds
(1, 2, 3), seed 0 is the one the engine was tuned on.

    python -m bench.fact_sessions --out /tmp/g1                  # seeds 0-3, 200 turns each
    python -m bench.g1 --sessions /tmp/g1 --seeds 1 2 3 --windows 64000 32000 --summarizer null
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.fact_sessions import FORMATS, HELD_OUT_SEEDS, PLACES
from bench.needles import PROBE_LAGS
from bench.score import score

OUTPUT_RESERVE = 4096
REPLAY_TIMEOUT_S = 3600


def replay(session: Path, window: int, summarizer: str, out: Path, myrm_path: str | None) -> float:
    env = dict(os.environ)
    if myrm_path:
        env["PYTHONPATH"] = myrm_path
    started = time.monotonic()
    command = [sys.executable, "-m", "myrm_tui", "replay", str(session), "--window", str(window)]
    command += ["--summarizer", summarizer, "--out", str(out)]
    subprocess.run(command, check=True, env=env, timeout=REPLAY_TIMEOUT_S, cwd=out.parent)
    return time.monotonic() - started


def _pool(reports: list[dict[str, Any]], key: str) -> dict[str, dict[str, float]]:
    """Probe-weighted R_verbatim / R_1 per entry of `retention[key]` over several reports."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for report in reports:
        for name, block in report["retention"].get(key, {}).items():
            n = block["probes"]
            sums[name][0] += n
            sums[name][1] += (block["r_verbatim"] or 0) * n
            sums[name][2] += (block["r_1"] or 0) * n
    return {
        name: {"probes": int(n), "r_verbatim": v / n if n else 0.0, "r_1": r / n if n else 0.0}
        for name, (n, v, r) in sums.items()
    }


def summarize(reports: list[dict[str, Any]]) -> dict[str, Any]:
    probes = sum(r["retention"]["probes"] for r in reports)
    kept = sum((r["retention"]["r_verbatim"] or 0) * r["retention"]["probes"] for r in reports)
    found = sum((r["retention"]["r_1"] or 0) * r["retention"]["probes"] for r in reports)
    prompt = sum(r["prefix"]["openai"]["token_weighted"] * 1 for r in reports) / len(reports)
    return {
        "sessions": len(reports),
        "probes": probes,
        "r_verbatim": kept / probes if probes else None,
        "r_1": found / probes if probes else None,
        "prefix_tw": prompt,
        "cost_kU": sum(r["cost"]["total_anthropic"] for r in reports) / 1000,
        "summarizer_tokens": sum(r["cost"]["summarizer_tokens"] for r in reports),
        "over_budget_turns": sum(r["budget"]["over_budget_turns"] for r in reports),
        "structure_error_turns": sum(r["structure"]["turns_with_errors"] for r in reports),
        "by_format": _pool(reports, "by_format"),
        "by_place": {PLACES[int(k)]: v for k, v in _pool(reports, "by_carrier").items()},
        "by_lag": _pool(reports, "by_lag"),
        "by_kind": _pool(reports, "by_kind"),
        "by_format_lag": _pool(reports, "by_format_lag"),
    }


def _cell(block: dict[str, float] | None) -> str:
    if not block or not block["probes"]:
        return "-"
    return f"{block['r_verbatim']:.2f} ({round(block['r_verbatim'] * block['probes'])}/{block['probes']})"


def markdown(results: dict[str, dict[str, Any]]) -> str:
    """One table per figure, a row per window (or window x summarizer)."""
    rows = list(results.items())
    out = ["| cell | probes | R_verbatim | R_1 | prefix (tw) | cost kU | summarizer tokens | over budget / struct. |"]
    out.append("|---|---|---|---|---|---|---|---|")
    for cell, s in rows:
        out.append(
            f"| {cell} | {s['probes']} | {s['r_verbatim']:.3f} | {s['r_1']:.3f} | {s['prefix_tw']:.3f} | "
            f"{s['cost_kU']:,.0f} | {s['summarizer_tokens']:,} | "
            f"{s['over_budget_turns']} / {s['structure_error_turns']} |"
        )
    out += ["", "R_verbatim per format (kept / probes):", ""]
    out.append("| cell | " + " | ".join(FORMATS) + " |")
    out.append("|---|" + "---|" * len(FORMATS))
    for cell, s in rows:
        out.append(f"| {cell} | " + " | ".join(_cell(s["by_format"].get(f)) for f in FORMATS) + " |")
    out += ["", "R_verbatim per place:", ""]
    places = list(PLACES.values())
    out.append("| cell | " + " | ".join(places) + " |")
    out.append("|---|" + "---|" * len(places))
    for cell, s in rows:
        out.append(f"| {cell} | " + " | ".join(_cell(s["by_place"].get(p)) for p in places) + " |")
    out += ["", "R_verbatim per lag (turns after the fact), and by kind:", ""]
    kinds = ["breaks shape", "keeps shape", "named", "not named"]
    out.append("| cell | " + " | ".join(f"lag {lag}" for lag in PROBE_LAGS) + " | " + " | ".join(kinds) + " |")
    out.append("|---|" + "---|" * (len(PROBE_LAGS) + len(kinds)))
    for cell, s in rows:
        lags = " | ".join(_cell(s["by_lag"].get(str(lag))) for lag in PROBE_LAGS)
        out.append(f"| {cell} | {lags} | " + " | ".join(_cell(s["by_kind"].get(k)) for k in kinds) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.g1", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", required=True, help="folder written by python -m bench.fact_sessions")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(HELD_OUT_SEEDS))
    parser.add_argument("--windows", type=int, nargs="+", default=[64_000, 32_000])
    parser.add_argument("--summarizers", nargs="+", default=["null"])
    parser.add_argument("--jobs", type=int, default=2, help="replays run at once")
    parser.add_argument("--myrm-path", help="PYTHONPATH of the replays (another checkout of myrm)")
    parser.add_argument("--out", help="folder for the OUT files (default: a temporary one)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    folder = Path(args.sessions)
    sessions = {seed: folder / f"facts-{seed}.jsonl" for seed in args.seeds}
    missing = [str(p) for p in sessions.values() if not p.exists()]
    if missing:
        parser.error(f"no session {', '.join(missing)}; write them with python -m bench.fact_sessions --out {folder}")
    out_dir = Path(args.out or folder / "out")
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, window, name) for window in args.windows for name in args.summarizers for seed in args.seeds]

    def run(job: tuple[int, int, str]) -> tuple[tuple[int, int, str], dict[str, Any], float]:
        seed, window, name = job
        out = out_dir / f"facts-{seed}-{window}-{name}.out.jsonl"
        took = replay(sessions[seed], window, name, out, args.myrm_path)
        report = score(out, sessions[seed], window=window, output_reserve=OUTPUT_RESERVE)
        print(f"seed {seed} window {window} {name}: R_verbatim {report['retention']['r_verbatim']:.3f} ({took:.0f} s)")
        return job, report, took

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = list(pool.map(run, jobs))
    results: dict[str, dict[str, Any]] = {}
    for window in args.windows:
        for name in args.summarizers:
            reports = [r for (seed, w, n), r, _ in done if w == window and n == name]
            results[f"{window // 1000}k {name}"] = summarize(reports)
    seeds = ", ".join(str(s) for s in args.seeds)
    print(f"\nG1, seeds {seeds} ({'held out' if 0 not in args.seeds else 'includes the tuning seed 0'})\n")
    print(markdown(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"seeds": args.seeds, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
