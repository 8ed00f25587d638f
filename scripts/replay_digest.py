"""Digests of the replays a refactor must not change: `python scripts/replay_digest.py`.

Why: a refactor of the engine, the agent or the store is only a refactor if every prompt the
one path sends stays byte-identical. This runs the generated coding and chatty workloads
(200 turns, seed 1) through `myrm replay` at a 32k window and prints two SHA-256 prefixes per
workload: the prompts alone, and every output field except wall-clock timings. Run it before
and after a change; the lines must match.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.workload import generate  # noqa: E402

# Keys holding wall-clock milliseconds: they differ run to run and say nothing about the prompt.
TIMING_KEYS = frozenset({"ms", "engine_ms", "stage_ms", "stages_ms"})
KINDS = ("coding", "chatty")
TURNS = 200
SEED = 1
WINDOW = 32000


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def digest(kind: str, workdir: Path) -> tuple[str, str]:
    lines, _answers = generate(kind, TURNS, SEED)
    session = workdir / f"{kind}.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = workdir / f"{kind}.out.jsonl"
    subprocess.run(
        [sys.executable, "-m", "myrm_tui", "replay", str(session), "--window", str(WINDOW), "--out", str(out)],
        check=True,
        cwd=workdir,
    )
    prompts, full = hashlib.sha256(), hashlib.sha256()
    for raw in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        prompts.update(json.dumps(record.get("prompt"), sort_keys=True).encode())
        full.update(json.dumps(_without_timings(record), sort_keys=True).encode())
    return prompts.hexdigest()[:16], full.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=KINDS, action="append", help="Only these workloads (default: both).")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kind or KINDS:
            prompts, full = digest(kind, Path(tmp))
            print(f"{kind}: prompts {prompts} all {full}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
