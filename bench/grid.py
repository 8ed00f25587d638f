"""`python -m bench all` / `python -m bench quick`: every contender on the same workloads, in one
process, scored with one counter; prints markdown tables and writes bench/results/<mode>.json.

- quick: one coding session of 100 turns (seed 1), window 32k, `null` summarizer; myrm, the
  baselines, the policies and whichever peers are installed. It proves the harness works (CI).
- all: coding / chatty / tool-storm at 400 turns x windows 32k and 64k x summarizers null and
  oracle; coding at 800 turns (64k, null) for B1; the three real-output sessions (60 turns) at
  32k with `null`; a check that `myrm replay` (the CLI, in a subprocess) sends the same prompts
  as the in-process engine; and B4's 12 adversarial cases (bench.adversarial, window 32k).
  Contenders whose prompts cannot depend on the summarizer run once per window and are reported
  under both summarizers.

`all` picks cells out of that grid with `--workloads chatty-400 --windows 32000,64000 --summarizers
oracle` (each a comma-separated list; default: the whole grid) and `--turns N` (the long sessions'
length, default 400; the workload names follow it). Only the sessions the picked cells need are
generated.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
WINDOWS = (32_000, 64_000)
SUMMARIZERS = ("null", "oracle")
LONG_TURNS = 400
B1_TURNS = 800
QUICK_TURNS = 100
QUICK_WINDOW = 32_000
SEED = 1
REAL_TURNS = 60
REAL_WINDOW = 32_000  # 60-turn sessions barely fill 64k: only the smaller window tells contenders apart
# Per-run wall caps (s): litellm's own tokenizer is quadratic (it does not finish past ~150 turns), so
# its defaults row gets a short cap; its shared-counter row is still O(n^2) in messages and gets
# 12 s (a DNF row says at which turn: ~200 turns; the 12 adversarial cases need the minutes
# it saved); everything else finishes far below the general cap.
CAP_S = 60.0
# myrm runs the whole agent per turn (litellm call per request, the store, background summaries):
# its 800-turn B1 cell takes minutes, and a cap there would only hide figures.
CAP_OVERRIDES = {"litellm": 8.0, "litellm@budget": 12.0, "myrm": 900.0}
# Grid cuts that keep `all` near 10 minutes on 2 cores (said in docs/benchmarks.md): litellm's
# defaults row DNFs within seconds everywhere, so it runs on the coding-400 cells only; raw is
# left out of the 800-turn B1 cell (no management, nothing to time; scoring its 5 MB prompts
# costs half a minute).
ONLY_IN = {"litellm": ("coding-400",)}
SKIP_IN = {"raw": ("coding-800",)}
CLI_CHECK = ("coding", 100, 32_000, "null")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\dZ?")
PEER_PACKAGES = ("hermes-agent", "aider-chat", "langchain-core", "litellm", "tiktoken")


@dataclass(frozen=True)
class Cell:
    workload: str
    window: int
    summarizer: str


KINDS = ("coding", "chatty", "tool-storm")
REAL_PREFIX = "real-"


@dataclass(frozen=True)
class Selection:
    """Which cells of the grid to run: None keeps every value of that axis."""

    workloads: tuple[str, ...] | None = None
    windows: tuple[int, ...] | None = None
    summarizers: tuple[str, ...] | None = None
    turns: int = LONG_TURNS

    def keeps(self, cell: Cell) -> bool:
        return self.keeps_workload(cell.workload) and self.keeps_axes(cell.window, cell.summarizer)

    def keeps_workload(self, workload: str) -> bool:
        # `real` names the three real-output sessions at once (their names come from the capture).
        real = workload.startswith(REAL_PREFIX) and "real" in (self.workloads or ())
        return self.workloads is None or workload in self.workloads or real

    def keeps_axes(self, window: int, summarizer: str) -> bool:
        return (self.windows is None or window in self.windows) and (
            self.summarizers is None or summarizer in self.summarizers
        )

    def wants_real(self) -> bool:
        """Whether any real-output cell can be kept (their capture takes a while)."""
        named = self.workloads is None or any(w == "real" or w.startswith(REAL_PREFIX) for w in self.workloads)
        return named and self.keeps_axes(REAL_WINDOW, "null")


def synthetic_specs(turns: int) -> list[tuple[str, str, int]]:
    """(name, kind, turns) of the generated sessions of `all`: the long ones, then B1's."""
    specs = [(f"{kind}-{turns}", kind, turns) for kind in KINDS] + [(f"coding-{B1_TURNS}", "coding", B1_TURNS)]
    return list({name: (name, kind, n) for name, kind, n in specs}.values())


def grid_cells(selection: Selection, real_names: list[str]) -> tuple[list[Cell], Cell | None]:
    """The cells of `all` the selection keeps, in table order, and the B1 cell if kept. The long
    sessions run at every picked window and summarizer (any size: a small window makes a short
    session compact); B1's and the real sessions' cells are fixed and kept only when they match."""
    windows = selection.windows or WINDOWS
    summarizers = selection.summarizers or SUMMARIZERS
    long_cells = [Cell(f"{kind}-{selection.turns}", w, s) for kind in KINDS for w in windows for s in summarizers]
    b1_cell = Cell(f"coding-{B1_TURNS}", 64_000, "null")
    fixed = [b1_cell] + [Cell(name, REAL_WINDOW, "null") for name in sorted(real_names)]
    cells = [c for c in long_cells + fixed if selection.keeps(c)]
    return cells, (b1_cell if b1_cell in cells else None)


def parse_selection(
    workloads: str | None, windows: str | None, summarizers: str | None, turns: int | None
) -> Selection:
    """The `--workloads/--windows/--summarizers/--turns` options, checked against the grid's names
    (a typo must not silently run an empty grid)."""
    from bench.workload import MAX_TURNS, MIN_TURNS
    from myrm_tui.llm.fake_providers.replay_summarizers import SUMMARIZERS as KNOWN_SUMMARIZERS

    def items(text: str | None) -> tuple[str, ...] | None:
        return tuple(x.strip() for x in text.split(",") if x.strip()) if text else None

    n = LONG_TURNS if turns is None else turns
    if not MIN_TURNS <= n <= MAX_TURNS:
        raise SystemExit(f"error: --turns must be between {MIN_TURNS} and {MAX_TURNS} (got {n}).")
    picked = items(workloads)
    if picked:
        # The real sessions' names are `bench.real_sessions.capture_all`'s keys (known before a capture).
        known = [name for name, _, _ in synthetic_specs(n)] + ["real", "real-env", "real-git", "real-pytest"]
        unknown = [w for w in picked if w not in known]
        if unknown:
            raise SystemExit(f"error: unknown workload(s) {', '.join(unknown)}; choose from {', '.join(known)}.")
    sizes: tuple[int, ...] | None = None
    if windows:
        try:
            sizes = tuple(int(w.replace("_", "")) for w in items(windows) or ())
        except ValueError:
            raise SystemExit(f"error: --windows takes token counts, e.g. 32000,64000 (got {windows!r}).") from None
    names = items(summarizers)
    if names:
        unknown = [x for x in names if x not in KNOWN_SUMMARIZERS]
        if unknown:
            raise SystemExit(
                f"error: unknown summarizer(s) {', '.join(unknown)}; choose from {', '.join(KNOWN_SUMMARIZERS)}."
            )
    return Selection(picked, sizes, names, n)


def _versions() -> dict[str, str]:
    found = {}
    for name in ("myrm-tui", *PEER_PACKAGES):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _make_workloads(folder: Path, specs: list[tuple[str, str, int]], real: bool) -> dict[str, Any]:
    from bench.harness import Workload
    from bench.sessionio import write_session
    from bench.workload import generate

    loaded: dict[str, Any] = {}
    for name, kind, turns in specs:
        path = folder / f"{name}.jsonl"
        lines, answers = generate(kind, turns, SEED)
        write_session(path, lines, answers)
        loaded[name] = Workload.load(name, path)
    if real:
        from bench.real_sessions import capture_all, write_sessions

        for path in write_sessions(folder / "real", capture_all(collect=False), turns=REAL_TURNS, seed=0):
            loaded[path.stem] = Workload.load(path.stem, path)
    return loaded


def _contenders(names: list[str] | None) -> list[Any]:
    from bench.contenders import ALL, BY_NAME

    if names:
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            raise SystemExit(f"error: unknown contender(s) {', '.join(unknown)}; choose from {', '.join(BY_NAME)}.")
        return [BY_NAME[n] for n in names]
    return list(ALL)


def run_grid(
    cells: list[Cell],
    workloads: dict[str, Any],
    contenders: list[Any],
    *,
    progress: bool = True,
    only_in: dict[str, tuple[str, ...]] | None = None,
    skip_in: dict[str, tuple[str, ...]] | None = None,
) -> list[dict[str, Any]]:
    only_in, skip_in = only_in or {}, skip_in or {}
    from bench.contenders.base import OUTPUT_RESERVE, RunConfig
    from bench.harness import run_one

    results: list[dict[str, Any]] = []
    reuse: dict[tuple[str, str, int], dict[str, Any]] = {}
    for cell in cells:
        for cls in contenders:
            contender = cls()
            if (
                contender.name in only_in and cell.workload not in only_in[contender.name]
            ) or cell.workload in skip_in.get(contender.name, ()):
                continue
            key = (contender.name, cell.workload, cell.window)
            if not contender.uses_summarizer and key in reuse:
                row = dict(
                    reuse[key],
                    summarizer=cell.summarizer,
                    detail=(
                        reuse[key]["detail"] + " (summarizer-independent: same run as " + reuse[key]["summarizer"] + ")"
                    ).strip(),
                )
                results.append(row)
                continue
            cap = CAP_OVERRIDES.get(contender.name, CAP_S)
            result = run_one(
                contender, workloads[cell.workload], RunConfig(cell.window, cell.summarizer, OUTPUT_RESERVE), cap_s=cap
            )
            row = result.as_dict()
            results.append(row)
            if not contender.uses_summarizer:
                reuse[key] = row
            if progress:
                print(
                    f"  {cell.workload:>16} {cell.window // 1000:>3}k {cell.summarizer:<6} {contender.name:<22} "
                    f"{row['status']:<13} {row['wall_s']:6.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return results


def cli_check(folder: Path) -> dict[str, Any]:
    """`myrm replay` in a subprocess vs `myrm_tui.replay.replay` in process: the same prompts."""
    from bench.contenders.base import OUTPUT_RESERVE, RunConfig
    from bench.contenders.myrm import Myrm, cli_replay
    from bench.sessionio import write_session
    from bench.workload import generate

    kind, turns, window, summarizer = CLI_CHECK
    path = folder / f"cli-check-{kind}-{turns}.jsonl"
    lines, answers = generate(kind, turns, SEED)
    write_session(path, lines, answers)
    config = RunConfig(window, summarizer, OUTPUT_RESERVE)
    started = time.perf_counter()
    try:
        via_cli = cli_replay(path, config)
    except Exception as exc:  # noqa: BLE001
        return {
            "session": path.name,
            "window": window,
            "summarizer": summarizer,
            "identical": False,
            "detail": f"{type(exc).__name__}: {exc}"[:400],
        }
    in_process = list(Myrm().run(lines, config))

    def split(records: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
        prompts = [(r["turn"], r["prompt"]) for r in records if "prompt" in r]
        # Recall results quote each hit's stored time. The replay's store runs on its virtual
        # clock, so they match too; masked anyway, so the check is about content.
        probes = [(r["turn"], r["query"], TIMESTAMP.sub("<time>", r["result"])) for r in records if "prompt" not in r]
        return prompts, probes

    (cli_prompts, cli_probes), (own_prompts, own_probes) = split(via_cli), split(in_process)
    prompt_diffs = [a[0] for a, b in zip(cli_prompts, own_prompts, strict=False) if a != b]
    probe_diffs = [a[:2] for a, b in zip(cli_probes, own_probes, strict=False) if a != b]
    prompts_identical = len(cli_prompts) == len(own_prompts) and not prompt_diffs
    return {
        "session": path.name,
        "window": window,
        "summarizer": summarizer,
        "identical": prompts_identical,
        "turns": len(cli_prompts),
        "prompt_differences": prompt_diffs[:10],
        "probes": len(cli_probes),
        "probe_results_identical": len(cli_probes) == len(own_probes) and not probe_diffs,
        "probe_differences": probe_diffs[:10],
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None, *, mode: str = "all") -> int:
    parser = argparse.ArgumentParser(prog=f"python -m bench {mode}", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--contenders", help="comma-separated names (default: all; peers not installed are listed as such)"
    )
    parser.add_argument("--out", help=f"results JSON (default: {RESULTS_DIR}/<mode>.json)")
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument("--no-real", action="store_true", help="(all) skip the real-output sessions")
    parser.add_argument("--no-cli-check", action="store_true", help="(all) skip the myrm replay CLI check")
    parser.add_argument("--no-adversarial", action="store_true", help="(all) skip B4's 12 adversarial cases")
    parser.add_argument("--quiet", action="store_true", help="no per-run progress on stderr")
    parser.add_argument(
        "--workloads",
        help=f"(all) comma-separated cells' sessions, e.g. chatty-{LONG_TURNS},coding-{B1_TURNS},real (default: all)",
    )
    parser.add_argument("--windows", help="(all) comma-separated windows in tokens, e.g. 32000,64000 (default: all)")
    parser.add_argument("--summarizers", help="(all) comma-separated summarizers, e.g. null,oracle (default: all)")
    parser.add_argument("--turns", type=int, help=f"(all) turns of the long sessions (default {LONG_TURNS})")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import myrm_tui  # noqa: F401  (offline litellm/tiktoken environment before any peer import)
    from bench.tables import render

    contenders = _contenders(args.contenders.split(",") if args.contenders else None)
    selection = parse_selection(args.workloads, args.windows, args.summarizers, args.turns)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-grid-") as tmp:
        folder = Path(tmp)
        if mode == "quick":
            workloads = _make_workloads(folder, [(f"coding-{QUICK_TURNS}", "coding", QUICK_TURNS)], real=False)
            cells = [Cell(f"coding-{QUICK_TURNS}", QUICK_WINDOW, "null")]
            b1_cell: Cell | None = cells[0]
        else:
            # Sessions only for the picked cells (the real ones need a capture; B1's 800 turns take a while).
            wanted = {c.workload for c in grid_cells(selection, [])[0]}
            specs = [spec for spec in synthetic_specs(selection.turns) if spec[0] in wanted]
            workloads = _make_workloads(folder, specs, real=not args.no_real and selection.wants_real())
            cells, b1_cell = grid_cells(selection, sorted(n for n in workloads if n.startswith(REAL_PREFIX)))
            if not cells:
                raise SystemExit("error: no cell of the grid matches --workloads/--windows/--summarizers.")
        cuts = {} if mode == "quick" else {"only_in": ONLY_IN, "skip_in": SKIP_IN}
        results = run_grid(cells, workloads, contenders, progress=not args.quiet, **cuts)
        check = (
            cli_check(folder)
            if mode == "all" and not args.no_cli_check and any(c.name == "myrm" for c in contenders)
            else None
        )
        adversarial = None
        if mode == "all" and not args.no_adversarial:
            from bench.adversarial import section

            adversarial = section(contenders, folder / "adversarial", progress=not args.quiet)
        sessions = {
            name: {
                "sha256": w.answers.get("session_sha256"),
                "turns": w.turns,
                "needles": len(w.answers.get("needles", [])),
            }
            for name, w in workloads.items()
        }
    elapsed = time.perf_counter() - started
    document = {
        "mode": mode,
        "command": f"python -m bench {mode}" + (" " + " ".join(argv) if argv else ""),
        "generated_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "elapsed_s": round(elapsed, 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "versions": _versions(),
        "seed": SEED,
        "sessions": sessions,
        "cells": [c.__dict__ for c in cells],
        "b1_cell": b1_cell.__dict__ if b1_cell else None,
        "cli_check": check,
        "results": results,
        "adversarial": adversarial,
    }
    publish(
        document, Path(args.out) if args.out else RESULTS_DIR / f"{mode}.json", render(document), args.markdown, elapsed
    )
    return 0


def publish(document: dict[str, Any], out: Path, text: str, markdown: str | None, elapsed: float) -> None:
    """Write the results JSON, its small summary (bench/result_summary.py; the one kept in git) and
    the tables, if asked; print the tables."""
    from bench.result_summary import write_summary

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1, default=str) + "\n", encoding="utf-8")
    write_summary(document, out)
    if markdown:
        Path(markdown).write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"\nwrote {out} in {elapsed:.0f} s", file=sys.stderr)
