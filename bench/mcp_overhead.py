"""What MCP costs: SDK import, server start with N servers, per-call overhead, first paint.

Rows (all against real servers: the SDK-built tests/mcp/mcp_test_server.py, and the published
`mcp-server-time` when installed):

- import: `import mcp` client modules in a fresh interpreter (what must never land on first paint)
- start: McpManager.start() → every server ready, for N = 1, 2, 4, 8 stdio servers started at once
  (in-process; each run is a fresh set of processes), plus mcp-server-time alone
- call: one tool call through McpTool.run (request, answer, result rendering) over stdio and over
  streamable HTTP on 127.0.0.1, echo of a short text; the 1 MB result as a second row
- first paint: a fresh `MyrmApp` process, headless, with 0 and with N servers configured: the
  first frame and the first frame with the prompt focused, from process spawn; with servers, also
  when all of them were ready (they start after the first paint, in the background)

Run from the repository root: `python -m bench.mcp_overhead [--runs 5] [--calls 200]`. Prints
tables and writes bench/results/mcp_overhead.json. Nothing in the test suite asserts a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from bench.tui_bench import child_env, fmt, print_table, summary

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results" / "mcp_overhead.json"
SERVER = REPO_ROOT / "tests" / "mcp" / "mcp_test_server.py"
# 5 runs per row: a median and a spread on a shared 2-core box in a few minutes in all.
RUNS = 5
# 200 calls: a stable median and p95 for a ~1-3 ms round trip.
CALLS = 200
SERVER_COUNTS = (1, 2, 4, 8)
FIRST_PAINT_SERVERS = 4
CHILD_TIMEOUT_S = 180.0


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def stdio_config(name: str) -> Any:
    from myrm_tui.settings.sections.mcp_servers import McpServerConfig

    return McpServerConfig(name, "stdio", command=sys.executable, args=(str(SERVER), "stdio"))


def time_server_config() -> Any:
    from myrm_tui.settings.sections.mcp_servers import McpServerConfig

    return McpServerConfig(
        "time", "stdio", command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC")
    )


# --- import ---------------------------------------------------------------------------------------

IMPORT_CODE = (
    "import time; t = time.perf_counter(); import mcp.client.client, mcp.client.stdio, "
    "mcp.client.streamable_http; print((time.perf_counter() - t) * 1000)"
)


def measure_import(runs: int) -> dict[str, Any]:
    values = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", IMPORT_CODE], capture_output=True, text=True, check=True)
        values.append(float(out.stdout.strip()))
    return summary(values)


# --- start ----------------------------------------------------------------------------------------


async def _start_once(configs: list[Any], workspace: Path) -> tuple[float, list[float], list[str]]:
    from myrm_tui.mcp.manager import McpManager

    manager = McpManager({c.name: c for c in configs}, workspace=workspace, startup_timeout=60.0, tool_timeout=60.0)
    await manager._sdk_imported()  # the one-off import is its own row
    began = now()
    await manager.start()
    await manager.wait_started()
    wall = (now() - began) * 1000
    statuses = manager.statuses()
    await manager.aclose()
    return wall, [(s.start_seconds or 0) * 1000 for s in statuses], [s.state for s in statuses]


def measure_start(runs: int, counts: tuple[int, ...], workspace: Path) -> list[dict[str, Any]]:
    rows = []
    cases = [(f"{n} × test server (stdio)", [stdio_config(f"s{i}") for i in range(n)]) for n in counts]
    try:
        import mcp_server_time  # noqa: F401

        cases.append(("1 × mcp-server-time (PyPI)", [time_server_config()]))
    except ImportError:
        pass
    for label, configs in cases:
        walls, each, failures = [], [], []
        for _ in range(runs):
            wall, per_server, states = asyncio.run(_start_once(configs, workspace))
            walls.append(wall)
            each += per_server
            failures += [s for s in states if s != "ready"]
        rows.append(
            {
                "case": label,
                "servers": len(configs),
                "all_ready_ms": summary(walls),
                "per_server_ms": summary(each),
                "not_ready": len(failures),
            }
        )
    return rows


# --- per call -------------------------------------------------------------------------------------


async def _calls(config: Any, tool: str, args: dict[str, Any], calls: int, workspace: Path) -> list[float]:
    from myrm_tui.agent.tools.base import ToolContext
    from myrm_tui.mcp.manager import McpManager
    from myrm_tui.settings.settings import Settings

    manager = McpManager({config.name: config}, workspace=workspace, startup_timeout=60.0, tool_timeout=60.0)
    try:
        await manager.wait_started()
        target = next(t for t in manager.tools() if t.name.endswith(f"__{tool}"))
        ctx = ToolContext(workspace=workspace, settings=Settings(), vault=None)
        for _ in range(5):  # warm the path (first-call imports, connection pools)
            await target.run(args, ctx)
        values = []
        for _ in range(calls):
            began = now()
            await target.run(args, ctx)
            values.append((now() - began) * 1000)
        return values
    finally:
        await manager.aclose()


def measure_calls(calls: int, workspace: Path) -> list[dict[str, Any]]:
    from myrm_tui.settings.sections.mcp_servers import McpServerConfig

    rows = []
    port = _free_port()
    log = workspace / "http-server.log"
    with open(log, "wb") as out:
        http = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_listening(port)
        http_config = McpServerConfig("h", "http", url=f"http://127.0.0.1:{port}/mcp")
        for label, config in (("stdio", stdio_config("t")), ("streamable HTTP", http_config)):
            values = asyncio.run(_calls(config, "echo", {"text": "ping"}, calls, workspace))
            rows.append({"transport": label, "tool": "echo (short text)", "ms": summary(values)})
            big = asyncio.run(_calls(config, "big", {}, max(10, calls // 20), workspace))
            rows.append({"transport": label, "tool": "big (1 MB text)", "ms": summary(big)})
    finally:
        http.terminate()
        http.wait(timeout=10)
    return rows


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, timeout: float = 60.0) -> None:
    import socket

    deadline = now() + timeout
    while now() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the HTTP test server did not listen on {port}")


# --- first paint ----------------------------------------------------------------------------------

# A fresh process builds the app with N servers configured (0: none) and records, from spawn: the
# first frame, the first frame with the prompt focused, and (N > 0) when every server was ready.
PAINT_DRIVER = textwrap.dedent("""
    import dataclasses, json, os, sys, time
    def now():
        return time.clock_gettime(time.CLOCK_MONOTONIC)
    out = {"t_spawn": float(os.environ["BENCH_T_SPAWN"])}
    workdir, model, count, server = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    from pathlib import Path
    from myrm_tui.settings.sections.mcp_servers import McpServerConfig
    from myrm_tui.settings import Settings
    from myrm_tui.tui.app import MyrmApp
    from textual.screen import Screen
    from textual.widgets import TextArea
    out["t_imported"] = now()
    servers = {f"s{i}": McpServerConfig(f"s{i}", "stdio", command=sys.executable, args=(server, "stdio"))
               for i in range(count)}
    settings = dataclasses.replace(Settings().with_values(model=model), mcp_servers=servers)
    original = Screen._compositor_refresh
    def refresh(self):
        original(self)
        t = now()
        out.setdefault("t_first_frame", t)
        if "t_input" not in out and isinstance(self.app.focused, TextArea):
            out["t_input"] = t
            out["sdk_loaded_at_input"] = "mcp" in sys.modules
    Screen._compositor_refresh = refresh
    class Bench(MyrmApp):
        def on_ready(self, event=None):
            self.set_interval(0.005, self.check)
            self.set_timer(120.0, self.exit)
        def check(self):
            if "t_input" not in out:
                return
            if count and not all(c.state == "ready" for c in self.mcp.connections()):
                return
            if count:
                out.setdefault("t_mcp_ready", now())
            self.exit()
    Bench(Path(workdir), settings, watch_themes=False).run(headless=True, size=(120, 40))
    with open(os.environ["BENCH_OUT"], "w") as fh:
        json.dump(out, fh)
""")


def _paint_once(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcp-paint-") as tmp:
        home = Path(tmp)
        work = home / "ws"
        (work / ".git").mkdir(parents=True)
        script = home / "script.json"
        script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
        env = child_env(home)
        env["BENCH_OUT"] = str(home / "out.json")
        env["MYRM_LOG_DIR"] = str(home / "logs")
        env["BENCH_T_SPAWN"] = repr(now())
        proc = subprocess.run(
            [sys.executable, "-c", PAINT_DRIVER, str(work), f"scripted/{script}", str(count), str(SERVER)],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if proc.returncode != 0 or not (home / "out.json").exists():
            raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
        return json.loads((home / "out.json").read_text())


def measure_first_paint(runs: int, servers: int) -> list[dict[str, Any]]:
    """Runs alternate between 0 and N servers, so drift in the box's load hits both rows alike."""
    by_count: dict[int, list[dict[str, Any]]] = {0: [], servers: []}
    for _ in range(runs):
        for count, samples in by_count.items():
            samples.append(_paint_once(count))
    rows = []
    for count, samples in by_count.items():

        def ms(key: str, samples: list[dict[str, Any]] = samples) -> dict[str, Any]:
            return summary([(s[key] - s["t_spawn"]) * 1000 for s in samples if key in s])

        rows.append(
            {
                "servers": count,
                "first_frame_ms": ms("t_first_frame"),
                "prompt_ready_ms": ms("t_input"),
                "all_servers_ready_ms": ms("t_mcp_ready") if count else None,
                "sdk_loaded_at_prompt": sum(1 for s in samples if s.get("sdk_loaded_at_input")),
            }
        )
    return rows


# --- report ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument(
        "--servers", default=",".join(map(str, SERVER_COUNTS)), help="server counts for the start rows, comma-separated"
    )
    args = parser.parse_args(argv)
    counts = tuple(int(n) for n in args.servers.split(","))
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        workspace = Path(tmp)
        os.environ.setdefault("MYRM_LOG_DIR", str(workspace / "logs"))
        results: dict[str, Any] = {"runs": args.runs, "calls": args.calls, "cpus": os.cpu_count()}
        results["import_ms"] = measure_import(args.runs)
        print_table(
            "SDK import (fresh interpreter)",
            ["median ms", "p95 ms"],
            [[fmt(results["import_ms"]["median"]), fmt(results["import_ms"]["p95"])]],
        )
        results["start"] = measure_start(args.runs, counts, workspace)
        print_table(
            "Start: every server ready (McpManager.start → wait_started)",
            ["case", "all ready median ms", "p95", "per server median ms", "not ready"],
            [
                [
                    r["case"],
                    fmt(r["all_ready_ms"]["median"]),
                    fmt(r["all_ready_ms"]["p95"]),
                    fmt(r["per_server_ms"]["median"]),
                    r["not_ready"],
                ]
                for r in results["start"]
            ],
        )
        results["calls_rows"] = measure_calls(args.calls, workspace)
        print_table(
            "Per call (McpTool.run: request, answer, rendering)",
            ["transport", "tool", "median ms", "p95 ms", "n"],
            [
                [r["transport"], r["tool"], fmt(r["ms"]["median"], 2), fmt(r["ms"]["p95"], 2), r["ms"]["n"]]
                for r in results["calls_rows"]
            ],
        )
        results["first_paint"] = measure_first_paint(args.runs, FIRST_PAINT_SERVERS)
        print_table(
            "First paint (fresh process, headless 120x40, from spawn)",
            [
                "servers",
                "first frame median ms",
                "prompt ready median ms",
                "all servers ready ms",
                "SDK loaded at prompt",
            ],
            [
                [
                    r["servers"],
                    fmt(r["first_frame_ms"]["median"]),
                    fmt(r["prompt_ready_ms"]["median"]),
                    fmt((r["all_servers_ready_ms"] or {}).get("median")),
                    f"{r['sdk_loaded_at_prompt']}/{args.runs}",
                ]
                for r in results["first_paint"]
            ],
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
