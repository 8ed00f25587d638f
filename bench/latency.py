"""`python -m bench latency`: the wait a user feels from the command line (issue 27), side by side.

Rows, each a fresh process timed on the wall clock, best of N, all in one run so the ratios
compare figures taken under the same machine load:

- `myrm --help`: the CLI's own floor (Python start + argument parsing).
- `myrm run "hi"` against an OpenAI-compatible server on loopback (bench/loopback_openai.py,
  answers in well under 1 ms): Python start + settings + store write + one HTTP request.
- `python -c "import litellm"` (with myrm's offline environment): what a call pays when it goes
  through litellm.
- `myrm run` one sentence on `local/smollm2`, and the same GGUF asked the same sentence by a bare
  llama-cpp-python script (only when the `local` extra and the model package are installed).
- then, in the same run, the first chat message, B1 and the streaming frames against their
  targets (bench/latency_targets.py; `--no-chat`, `--no-engine`, `--no-stream` skip them).

Rounds are interleaved (one run of every row per round) so a load spike from another process
hits every row, not one. One untimed warm-up run per row first writes byte code and fills the
page cache, as on a user's machine after the first call. `--base PATH` adds the myrm rows for
another checkout (PYTHONPATH=PATH), for a before/after table in one run.

Targets (issue 27): `myrm run` on loopback <= 12x `myrm --help`; `myrm run` on local/smollm2
<= 2x the bare script.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import latency_targets
from bench.loopback_openai import ANSWER, loopback_server
from bench.tui_bench import RESULTS_DIR, environment, print_table

REPO_ROOT = Path(__file__).resolve().parents[1]
# Best of 3: the floor of each command, which a scheduler hiccup on a shared 2-core box only
# raises; the median is printed next to it.
RUNS = 3
# The sentence both local rows ask, and the reply cap of the bare script (myrm's own default for
# the embedded model, llm/defaults.DEFAULT_MAX_TOKENS, is what `myrm run` uses).
SENTENCE = "What is the capital of France? Answer in one short sentence."
BARE_MAX_TOKENS = 256
# n_ctx of the bare script: the window myrm gives the embedded model (local_provider.LOCAL_CONTEXT_WINDOW).
BARE_N_CTX = 8192
# One command's limit: a cold local-model run on a loaded 2-core machine stays well under it.
TIMEOUT_S = 300
TARGET_LOOPBACK_X_HELP = 12.0
# The end of a failed command's output kept in the table: enough for its error line.
FAILURE_CHARS = 160
# The loopback server takes any key; one is set so that a checkout without the keyless-server
# placeholder (llm/endpoint_key.py) can be measured with --base too.
LOOPBACK_KEY = "sk-bench-loopback-not-a-secret"
TARGET_LOCAL_X_BARE = 2.0

# The bare script loads the model as myrm's worker does (llm/local/llama_safety.py: no extra buffer
# types), else on a CPU with AMX it crashes (SIGSEGV) on its first decode and there is no floor.
BARE_SCRIPT = """
import os, sys
import llama_cpp.llama_cpp as c_api
from llama_cpp import Llama
default_params = c_api.llama_model_default_params
def without_extra_buffers():
    params = default_params()
    if hasattr(params, "use_extra_bufts"):
        params.use_extra_bufts = False
    return params
c_api.llama_model_default_params = without_extra_buffers
llama = Llama(model_path=sys.argv[1], n_ctx=int(sys.argv[3]), n_threads=os.cpu_count() or 1, verbose=False)
out = llama.create_chat_completion(messages=[{"role": "user", "content": sys.argv[2]}], max_tokens=int(sys.argv[4]))
print(out["choices"][0]["message"]["content"])
"""


@dataclass
class Row:
    key: str
    label: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    expect: str | None = None  # text the output must contain for the run to count
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)
    failure: str | None = None

    def run_once(self) -> tuple[float, float] | None:
        """(wall, CPU) seconds of one run; CPU is user + system of the process and the children it
        waited for (the model worker), which a loaded machine does not inflate the way it does
        the wall clock."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(
            self.argv, cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if result.returncode != 0 or (self.expect is not None and self.expect not in result.stdout):
            said = " ".join((result.stderr or result.stdout).split())
            self.failure = f"exit {result.returncode}: {said[-FAILURE_CHARS:]}"
            return None
        return elapsed, cpu

    @property
    def best(self) -> float | None:
        return min(self.times) if self.times else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def best_cpu(self) -> float | None:
        return min(self.cpu_times) if self.cpu_times else None


def clean_env(config_dir: Path, pythonpath: Path) -> dict[str, str]:
    """No provider key or MYRM_* setting of the caller's shell; byte code written (as for a user)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MYRM_") and not k.endswith(("_API_KEY", "_API_TOKEN")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["MYRM_CONFIG_DIR"] = str(config_dir)
    env["PYTHONPATH"] = str(pythonpath)
    return env


def local_model() -> Path | None:
    """The SmolLM2 GGUF when llama-cpp-python and the model package are installed."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        return None
    from myrm_tui.llm.local.provider import smollm2_path

    return smollm2_path()


def myrm_rows(tag: str, root: Path, work: Path, api_base: str, gguf: Path | None) -> list[Row]:
    """help, run on loopback and (with a model) run on local/smollm2, for the checkout at `root`."""
    config = work / f"config-myrm{tag}"
    config.mkdir()
    (config / "config.toml").write_text(
        f'model = "openai/bench"\n\n[models."openai/bench"]\napi_base = "{api_base}"\ncontext_window = 8192\n',
        encoding="utf-8",
    )
    workspace = work / f"ws{tag}"
    (workspace / ".git").mkdir(parents=True)  # stops workspace discovery here
    env = clean_env(config, root)
    env["OPENAI_API_KEY"] = LOOPBACK_KEY
    py = [sys.executable, "-m", "myrm_tui"]
    suffix = f" ({tag.strip('-')})" if tag else ""
    rows = [
        Row(f"help{tag}", f"myrm --help{suffix}", [*py, "--help"], env, workspace),
        Row(
            f"run_loopback{tag}", f'myrm run "hi", loopback server{suffix}', [*py, "run", "hi"], env, workspace, ANSWER
        ),
    ]
    if gguf is not None:
        rows.append(
            Row(
                f"run_local{tag}",
                f"myrm run, local/smollm2{suffix}",
                [*py, "run", "--model", "local/smollm2", SENTENCE],
                env,
                workspace,
            )
        )
    return rows


def build_rows(work: Path, api_base: str, base: Path | None, with_local: bool) -> list[Row]:
    gguf = local_model() if with_local else None
    rows = myrm_rows("", REPO_ROOT, work, api_base, gguf)
    litellm_env = clean_env(work / "config", REPO_ROOT)
    litellm_env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"})
    rows.append(
        Row("import_litellm", 'python -c "import litellm"', [sys.executable, "-c", "import litellm"], litellm_env, work)
    )
    if gguf is not None:
        bare = [sys.executable, "-c", BARE_SCRIPT, str(gguf), SENTENCE, str(BARE_N_CTX), str(BARE_MAX_TOKENS)]
        rows.append(Row("bare_local", "bare llama-cpp-python script, same GGUF", bare, litellm_env, work))
    if base is not None:
        rows += myrm_rows("-base", base.resolve(), work, api_base, gguf)
    return rows


def ratios(by_key: dict[str, Row]) -> list[tuple[str, float | None, float | None, str]]:
    """(what, wall best/best, CPU best/best, target) for the issue's ratios, for this tree and
    for --base."""

    def over(a: str, b: str) -> tuple[float | None, float | None]:
        x, y = by_key.get(a), by_key.get(b)
        if not (x and y):
            return None, None
        wall = x.best / y.best if x.best and y.best else None
        cpu = x.best_cpu / y.best_cpu if x.best_cpu and y.best_cpu else None
        return wall, cpu

    out = []
    for tag in ("", "-base"):
        if f"help{tag}" not in by_key:
            continue
        name = " (base)" if tag else ""
        pairs = [(f"run loopback / help{name}", f"run_loopback{tag}", f"help{tag}", TARGET_LOOPBACK_X_HELP)]
        if f"run_local{tag}" in by_key:
            pairs.append((f"run local / bare script{name}", f"run_local{tag}", "bare_local", TARGET_LOCAL_X_BARE))
        for what, a, b, target in pairs:
            out.append((what, *over(a, b), f"<= {target:g}x"))
    return out


def measure(runs: int, base: Path | None, with_local: bool, log: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="myrm-latency-") as tmp, loopback_server() as api_base:
        work = Path(tmp)
        (work / "config").mkdir()
        rows = build_rows(work, api_base, base, with_local)
        log(f"warm-up: one untimed run of {len(rows)} commands")
        for row in rows:
            row.run_once()
        for round_no in range(1, runs + 1):
            log(f"round {round_no}/{runs}")
            for row in rows:
                if row.failure is None:
                    measured = row.run_once()
                    if measured is not None:
                        row.times.append(measured[0])
                        row.cpu_times.append(measured[1])
        by_key = {row.key: row for row in rows}
        return {
            "environment": environment(),
            "runs": runs,
            "rows": [
                {
                    "key": r.key,
                    "what": r.label,
                    "best_s": r.best,
                    "median_s": r.median,
                    "times_s": r.times,
                    "best_cpu_s": r.best_cpu,
                    "cpu_times_s": r.cpu_times,
                    "failure": r.failure,
                }
                for r in rows
            ],
            "ratios": [{"what": w, "ratio": v, "cpu_ratio": c, "target": t} for w, v, c, t in ratios(by_key)],
        }


def report(result: dict[str, Any]) -> None:
    rows = result["rows"]
    help_best = next((r["best_s"] for r in rows if r["key"] == "help"), None)

    def sec(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f} s"

    table = [
        [
            r["what"],
            sec(r["best_s"]),
            sec(r["median_s"]),
            "—" if not (r["best_s"] and help_best) else f"{r['best_s'] / help_best:.1f}x",
            sec(r["best_cpu_s"]),
            r["failure"] or "",
        ]
        for r in rows
    ]
    env = result["environment"]
    print_table(
        f"Latency, best of {result['runs']} (python {env['python']}, {env['cpus']} CPUs, load {env['loadavg']})",
        ["what", "best", "median", "x help", "best CPU", "failure"],
        table,
    )

    def times(value: float | None) -> str:
        return "—" if value is None else f"{value:.1f}x"

    print_table(
        "Ratios (best / best, one run; CPU: user + system seconds)",
        ["what", "wall", "CPU", "target"],
        [[w["what"], times(w["ratio"]), times(w["cpu_ratio"]), w["target"]] for w in result["ratios"]],
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"timed runs per command (default {RUNS})")
    parser.add_argument("--base", type=Path, help="another checkout to measure too (its myrm rows, PYTHONPATH=BASE)")
    parser.add_argument("--no-local", action="store_true", help="skip the local/smollm2 rows")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "latency.json", help="where to write the JSON result")
    parser.add_argument("--no-chat", action="store_true", help="skip the first chat message row")
    parser.add_argument("--no-engine", action="store_true", help="skip B1 (the engine's CPU per turn, a few minutes)")
    parser.add_argument("--no-stream", action="store_true", help="skip the streaming frames row")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    result = measure(max(1, args.runs), args.base, not args.no_local, log)
    result["targets"] = latency_targets.measure(
        max(1, args.runs), chat=not args.no_chat, engine=not args.no_engine, stream=not args.no_stream, log=log
    )
    report(result)
    latency_targets.report(result["targets"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten: {args.out}")
    failed = [r["key"] for r in result["rows"] if r["failure"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
