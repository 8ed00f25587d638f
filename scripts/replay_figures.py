"""Replay figures of the context engine (docs/context-engine.md): `myrm replay` (the session
through the real agent; docs/replay-format.md) on the seeded coding workload, scored by
bench/score.py, for each window and fake summarizer.

    python scripts/replay_figures.py --turns 400 --windows 32000 64000 --summarizers null head oracle
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import myrm_tui  # noqa: F401  (offline environment first)
from bench.score import score
from bench.workload import generate
from myrm_tui.replay import ReplayOptions, run_replay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 64_000])
    parser.add_argument("--summarizers", nargs="+", default=["null", "head", "oracle"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "coding.jsonl"
        lines, answers = generate("coding", args.turns, args.seed)
        session.write_text("".join(json.dumps(line) + "\n" for line in lines))
        answers_path = Path(str(session) + ".answers.json")
        answers_path.write_text(json.dumps(answers))
        print(
            "| window | summarizer | prefix stability | breaks / compactions | R_verbatim | R_1 | constraint "
            "| summaries by depth | background summaries accepted / tried | cost kU | engine p50 / p95 ms |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for window in args.windows:
            for name in args.summarizers:
                out = Path(tmp) / f"out-{window}-{name}.jsonl"
                with out.open("w") as handle:
                    run_replay(session, handle, ReplayOptions(window=window, summarizer=name))
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
                    f"{timing['p50_ms']:.2f} / {timing['p95_ms']:.2f} |"
                )


if __name__ == "__main__":
    main()
