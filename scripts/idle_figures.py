"""Idle-gap figures (docs/benchmarks.md, "Idle gaps"): the seeded workload with user pauses past
the cache TTL (`bench.workload --idle`), replayed through `myrm replay` with the cache-TTL prune
tier on (the default) or off (EngineConfig.cache_ttl_prune), and with the opt-in keep-alive
simulated (ReplayOptions.keepalive); the same session without pauses for reference. Scored by
bench/score.py with the TTL-aware cost (bench/cache_ttl.py).

    python scripts/idle_figures.py --turns 200 --windows 32000 64000 [--json OUT.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import myrm_tui  # noqa: F401  (offline environment first)
from bench.score import score
from bench.sessionio import write_session
from bench.workload import KINDS, generate
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.replay import ReplayOptions, run_replay

# (label, idle session?, cache-TTL prune tier, keep-alive simulated)
ARMS = (
    ("no pauses", False, True, False),
    ("pauses, TTL prune on", True, True, False),
    ("pauses, TTL prune off", True, False, False),
    ("pauses, TTL prune on + keep-alive", True, True, True),
)


def _row(label: str, window: int, result: dict[str, Any], blind: dict[str, Any] | None) -> dict[str, Any]:
    cost, prefix, retention = result["cost"], result["prefix"], result["retention"]
    ttl = cost["cache_ttl"]
    return {
        "arm": label,
        "window": window,
        "cost_anthropic": cost["total_anthropic"],
        "cost_openai": cost["total_openai"],
        "ttl_blind_anthropic": blind["cost"]["total_anthropic"] if blind else cost["total_anthropic"],
        "prefix_openai": prefix["openai"]["token_weighted"],
        "prefix_anthropic": prefix["anthropic"]["token_weighted"],
        "breaks": prefix["breaks"],
        "compactions": prefix["compactions"],
        "cold_turns": ttl["cold_turns_anthropic"],
        "cold_tokens": ttl["cold_tokens_anthropic"],
        "keepalive_probes": ttl["keepalive_probes"],
        "keepalive_anthropic": ttl["keepalive_anthropic"],
        "keepalive_openai": ttl["keepalive_openai"],
        "r_verbatim": retention["r_verbatim"],
        "r_1": retention["r_1"],
        "mean_prompt": result["budget"]["mean_prompt_tokens"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="coding")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 64_000])
    parser.add_argument("--summarizer", default="null")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sessions = {}
        for idle in (False, True):
            path = Path(tmp) / f"{args.kind}{'-idle' if idle else ''}.jsonl"
            lines, answers = generate(args.kind, args.turns, args.seed, idle=idle)
            write_session(path, lines, answers)
            sessions[idle] = path
        print(
            "| window | arm | cost A kU (TTL-blind) | cost O kU | prefix O | breaks / compactions | cold turns "
            "| keep-alive probes / cost A kU | R_verbatim | R_1 |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for window in args.windows:
            for label, idle, prune, keepalive in ARMS:
                out = Path(tmp) / f"out-{window}-{len(rows)}.jsonl"
                config = dataclasses.replace(DEFAULT_CONFIG, cache_ttl_prune=prune)
                options = ReplayOptions(window=window, summarizer=args.summarizer, config=config, keepalive=keepalive)
                with out.open("w") as handle:
                    run_replay(sessions[idle], handle, options)
                result = score(out, sessions[idle], window=window, output_reserve=4096)
                blind = score(out, sessions[False], window=window, output_reserve=4096) if idle else None
                row = _row(label, window, result, blind)
                rows.append(row)
                print(
                    f"| {window // 1000}k | {label} | {row['cost_anthropic'] / 1000:,.1f} "
                    f"({row['ttl_blind_anthropic'] / 1000:,.1f}) | {row['cost_openai'] / 1000:,.1f} | "
                    f"{row['prefix_openai']:.3f} | {row['breaks']} / {row['compactions']} | {row['cold_turns']} | "
                    f"{row['keepalive_probes']} / {row['keepalive_anthropic'] / 1000:,.1f} | "
                    f"{row['r_verbatim']:.3f} | {row['r_1']:.3f} |",
                    flush=True,
                )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
