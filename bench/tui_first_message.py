"""`python -m bench.tui_first_message`: the first chat message after `myrm` starts, against the
first token of `myrm run`, on the same OpenAI-compatible server on loopback (issue 27).

Rows, each a fresh process (best of N, the median beside it), interleaved one run of each per
round so a load spike hits both:

- chat: the app started headless (`App.run_test`), the warm-up finished and the app left idle for
  IDLE_S (a user reads the screen before typing); then the first message goes, and the row is the
  time from sending it to the first reply text on the chat screen.
- chat warm-up: from creating the app to the end of its warm-up (a message sent earlier waits
  for it: the turn needs the agent stack the warm-up loads).
- `myrm run "hi"`: from the process start to the first byte of the answer on stdout (what a user
  of the command feels: Python start, settings, store, the request).

The server (bench/loopback_openai.py) answers in well under a millisecond, so both rows are
myrm's own time. Target (issue 27): chat <= 1.5x `myrm run`. `--base PATH` adds the rows for
another checkout (PYTHONPATH=PATH). Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.latency import LOOPBACK_KEY, clean_env
from bench.loopback_openai import ANSWER, loopback_server
from bench.tui_bench import RESULTS_DIR, environment, print_table

REPO_ROOT = Path(__file__).resolve().parents[1]
RUNS = 3
# How long the app sits idle between the end of its warm-up and the first message: the warm-up
# work started after the first paint has had its time, as it has for a user who reads first.
IDLE_S = 2.0
TIMEOUT_S = 400  # one child, on a loaded 2-core box (the warm-up imports litellm)
TARGET_CHAT_X_RUN = 1.5

# The chat row's child: the real app, headless, the real settings loader (the same config file as
# `myrm run`). It polls for the reply's first text every 2 ms, which costs the loop nothing that
# matters next to the figure.
CHAT_CHILD = r"""
import asyncio, json, sys, time
from pathlib import Path

from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage


async def until(predicate, timeout):
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("gave up waiting")
        await asyncio.sleep(0.002)


async def main(workspace, idle_s):
    began = time.perf_counter()
    app = MyrmApp(workspace, load_settings(workspace).settings, watch_themes=False)
    async with app.run_test(size=(110, 40)):
        await until(lambda: getattr(app, "chat_screen", None) is not None, 60)
        screen = app.chat_screen
        await until(screen.ready.is_set, 300)
        ready = time.perf_counter() - began
        await asyncio.sleep(idle_s)
        start = time.perf_counter()
        screen.send_message("hi", draft=None)
        await until(lambda: any(r.text for r in screen.query(AssistantMessage)), 120)
        first = time.perf_counter() - start
        await until(lambda: not screen.turn_running, 60)
    print(json.dumps({"first_token_s": first, "ready_s": ready}))


asyncio.run(main(Path(sys.argv[1]), float(sys.argv[2])))
"""


def setup(work: Path, tag: str, root: Path, api_base: str) -> tuple[dict[str, str], Path]:
    """A config naming the loopback server (as bench/latency.py writes it) and a workspace."""
    config = work / f"config{tag}"
    config.mkdir()
    (config / "config.toml").write_text(
        f'model = "openai/bench"\n\n[models."openai/bench"]\napi_base = "{api_base}"\ncontext_window = 8192\n',
        encoding="utf-8",
    )
    workspace = work / f"ws{tag}"
    (workspace / ".git").mkdir(parents=True)  # stops workspace discovery here
    env = clean_env(config, root)
    env["OPENAI_API_KEY"] = LOOPBACK_KEY
    return env, workspace


def run_first_token(env: dict[str, str], workspace: Path) -> float:
    """Seconds from spawning `myrm run "hi"` to the first byte of its answer on stdout."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "myrm_tui", "run", "hi"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: the byte read here is not kept from `communicate` below
    )
    assert process.stdout is not None
    first = process.stdout.read(1)
    elapsed = time.perf_counter() - start
    rest, err = process.communicate(timeout=TIMEOUT_S)
    if process.returncode != 0 or ANSWER not in (first + rest).decode(errors="replace"):
        raise RuntimeError(f"myrm run failed ({process.returncode}): {err.decode(errors='replace')[-200:]}")
    return elapsed


def chat_first_token(env: dict[str, str], workspace: Path) -> tuple[float, float]:
    """Seconds from sending the first chat message (app idle) to its first reply text, and from
    creating the app to the end of its warm-up (a message sent earlier waits for it)."""
    result = subprocess.run(
        [sys.executable, "-c", CHAT_CHILD, str(workspace), str(IDLE_S)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"chat child failed ({result.returncode}): {result.stderr[-400:]}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    return float(figures["first_token_s"]), float(figures["ready_s"])


def measure(runs: int, base: Path | None, log: Any) -> dict[str, Any]:
    checkouts = [("", REPO_ROOT)] + ([("-base", base)] if base is not None else [])
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="myrm-first-message-") as tmp, loopback_server() as api_base:
        work = Path(tmp)
        places = {tag: setup(work, tag, root, api_base) for tag, root in checkouts}
        for env, workspace in places.values():  # untimed: byte code and page cache, as for a user
            run_first_token(env, workspace)
        for round_ in range(runs):
            for tag, (env, workspace) in places.items():
                first, ready = chat_first_token(env, workspace)
                run = run_first_token(env, workspace)
                for key, value in ((f"chat{tag}", first), (f"ready{tag}", ready), (f"run{tag}", run)):
                    times.setdefault(key, []).append(value)
                    log(f"  round {round_ + 1}/{runs} {key}: {value:.3f} s")
    return {"environment": environment(), "runs": runs, "idle_s": IDLE_S, "times": times}


LABELS = {
    "chat": "first chat message → first token",
    "ready": "chat: app start → warm-up done",
    "run": '`myrm run "hi"` → first token',
}


def report(result: dict[str, Any]) -> None:
    times = result["times"]

    def best(key: str) -> float | None:
        return min(times[key]) if times.get(key) else None

    rows = []
    for key in times:
        label = LABELS[key.partition("-")[0]]
        tag = key.partition("-")[2]
        rows.append(
            [label + (f" ({tag})" if tag else ""), f"{best(key):.2f} s", f"{statistics.median(times[key]):.2f} s"]
        )
    for tag in sorted({key.partition("-")[2] for key in times}):
        suffix = f"-{tag}" if tag else ""
        chat, run = best(f"chat{suffix}"), best(f"run{suffix}")
        if chat is not None and run:
            rows.append(
                [f"chat / run{f' ({tag})' if tag else ''}", f"{chat / run:.2f}x", f"target <= {TARGET_CHAT_X_RUN}x"]
            )
    load = result["environment"].get("loadavg")
    load_text = f"{load[0]:.1f}" if load else "?"
    print_table(
        f"First token, loopback OpenAI-compatible server (best / median of {result['runs']}; load average {load_text})",
        ["what", "best", "median"],
        rows,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--base", type=Path, default=None, help="another checkout to measure beside this one")
    parser.add_argument("--out", default="", help="JSON path (default bench/results/tui_first_message.json)")
    args = parser.parse_args(argv)
    result = measure(args.runs, args.base, lambda line: print(line, file=sys.stderr, flush=True))
    report(result)
    out = Path(args.out) if args.out else RESULTS_DIR / "tui_first_message.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
