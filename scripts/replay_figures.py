"""Replay figures of the context engine (docs/context-engine.md): `myrm replay` (the session
through the real agent; docs/replay-format.md) on the seeded coding workload, scored by
bench/score.py, for each window and fake summarizer.

    python scripts/replay_figures.py --turns 400 --windows 32000 64000 --summarizers null head oracle
    python scripts/replay_figures.py --kind tool-storm --turns 400 --windows 32000 64000 --summarizers null
    python scripts/replay_figures.py --windows 32000 --summarizers oracle --by-carrier   # where needles are lost
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import myrm_tui  # noqa: F401  (offline environment first)
from bench.score import score
from bench.workload import KINDS, generate
from myrm_tui.context.window.config import DEFAULT_CONFIG, EngineConfig
from myrm_tui.replay import ReplayOptions, run_replay


def _uncached_cost(cost: dict) -> float:
    """What a model without a prompt cache bills (every prompt token at the input price), plus
    the summarizer, retrieval and re-fetch tokens the cached figures add too."""
    return float(
        cost["prompt_tokens"] + cost["summarizer_tokens"] + cost["retrieval_tokens"] + cost["refetch_penalty_tokens"]
    )


def _print_breakdown(retention: dict, cost: dict) -> None:
    """R_verbatim per carrier (bench/workload.py: where the needle was planted) and per probe lag."""
    carriers = {k: round(v["r_verbatim"], 2) for k, v in retention["by_carrier"].items()}
    lags = {k: round(v["r_verbatim"], 2) for k, v in retention["by_lag"].items()}
    print(
        f"  by carrier {carriers}; by lag {lags}; summarizer tokens {cost['summarizer_tokens']:,}; "
        f"prompt tokens {cost['prompt_tokens']:,}"
    )


def _config(pairs: list[str]) -> EngineConfig:
    """DEFAULT_CONFIG with `--config KEY=VALUE` fields, each read as its default's type."""
    changes: dict[str, object] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        default = getattr(DEFAULT_CONFIG, key)
        changes[key] = value.lower() in ("1", "true", "on") if isinstance(default, bool) else type(default)(value)
    return dataclasses.replace(DEFAULT_CONFIG, **changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="coding", help="the workload (bench/workload.py)")
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 64_000])
    parser.add_argument("--summarizers", nargs="+", default=["null", "head", "oracle"])
    parser.add_argument(
        "--no-caching", action="store_true", help="replay a model without prompt caching (ReplayOptions.caching)"
    )
    parser.add_argument(
        "--eviction-order", choices=("auto", "recency", "relevance"), default="auto", help="the eviction_order setting"
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an EngineConfig field for the replayed engine (repeatable), e.g. eviction_min_age=4",
    )
    parser.add_argument(
        "--by-carrier",
        action="store_true",
        help="after each row: R_verbatim by carrier and by lag, and the summarizer's tokens (what a loss is made of)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / f"{args.kind}.jsonl"
        lines, answers = generate(args.kind, args.turns, args.seed)
        session.write_text("".join(json.dumps(line) + "\n" for line in lines))
        answers_path = Path(str(session) + ".answers.json")
        answers_path.write_text(json.dumps(answers))
        print(
            "| window | summarizer | prefix stability | breaks / compactions | R_verbatim | R_1 | constraint "
            "| summaries by depth | background summaries accepted / tried | cost kU | engine p50 / p95 ms "
            "| uncached cost kU |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for window in args.windows:
            for name in args.summarizers:
                out = Path(tmp) / f"out-{window}-{name}.jsonl"
                with out.open("w") as handle:
                    run_replay(
                        session,
                        handle,
                        ReplayOptions(
                            window=window,
                            summarizer=name,
                            caching=not args.no_caching,
                            eviction_order=args.eviction_order,
                            config=_config(args.config),
                        ),
                    )
                result = score(out, session, answers_path, window=window, output_reserve=4096)
                depths: Counter[str] = Counter()
                tried = accepted = 0
                for raw in out.open():
                    for report in json.loads(raw).get("events", []):
                        event = report.get("event") or {}
                        for depth, n in (event.get("summaries") or {}).get("created_by_depth", {}).items():
                            depths[depth] += n
                        for summary in (report.get("replay") or {}).get("summaries", []):
                            tried += 1
                            accepted += not summary.get("fallback")
                prefix, retention, timing = result["prefix"], result["retention"], result["timing"]
                print(
                    f"| {window // 1000}k | {name} | {prefix['openai']['token_weighted']:.3f} | "
                    f"{prefix['breaks']} / {prefix['compactions']} | {retention['r_verbatim']:.3f} | "
                    f"{retention['r_1']:.3f} | {retention['constraint_share']:.0%} | "
                    f"{dict(sorted(depths.items()))} | {accepted} / {tried} | "
                    f"{result['cost']['total_anthropic'] / 1000:,.0f} | "
                    f"{timing['p50_ms']:.2f} / {timing['p95_ms']:.2f} | {_uncached_cost(result['cost']) / 1000:,.0f} |"
                )
                if args.by_carrier:
                    _print_breakdown(retention, result["cost"])


if __name__ == "__main__":
    main()
