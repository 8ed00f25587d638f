"""Helpers for the MCP tests: the in-tests server (stdio command, HTTP process), process checks,
and the `myrm` subprocess runner. A plain module (test modules import it; fixtures are in conftest)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.mcp.connection import ServerConnection
from myrm_tui.mcp.manager import McpManager
from myrm_tui.settings.sections.mcp_servers import HTTP, STDIO, McpServerConfig

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SERVER = HERE / "mcp_test_server.py"
# A cold server (Python + the SDK) starts in ~1 s here; on a loaded 2-core box give it plenty.
START_TIMEOUT_S = 60.0
# A cold `myrm run` imports litellm (seconds on a loaded 2-core machine).
CLI_TIMEOUT_S = 240.0
_PID = re.compile(r"test server: starting \(.*\) pid (\d+)")


def stdio_config(name: str = "t", *extra: str, **fields) -> McpServerConfig:
    return McpServerConfig(name, STDIO, command=sys.executable, args=(str(SERVER), "stdio", *extra), **fields)


def http_config(url: str, name: str = "h", **fields) -> McpServerConfig:
    return McpServerConfig(name, HTTP, url=url, **fields)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class HttpServer:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_http_server(log: Path) -> HttpServer:
    """The in-tests server on streamable HTTP, 127.0.0.1, a free port; returns once it listens."""
    port = free_port()
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(port)], stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the HTTP test server exited: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return HttpServer(process, port, log)
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"the HTTP test server did not listen: {log.read_text()[-2000:]}") from None
            time.sleep(0.1)


def alive(pid: int) -> bool:
    """True while the process runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def server_pids(log: Path) -> list[int]:
    """Pids the in-tests server wrote to its stderr log (one per start)."""
    if not log.exists():
        return []
    return [int(m) for m in _PID.findall(log.read_text(encoding="utf-8", errors="replace"))]


def clean_env(config_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith(("_API_KEY", "_API_TOKEN"))
    }
    env["MYRM_CONFIG_DIR"] = str(config_dir)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    env.update(extra or {})
    return env


def run_myrm(
    workspace: Path, config_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=clean_env(config_dir, env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def toml_server(config: McpServerConfig) -> str:
    """The `[mcp_servers.NAME]` table a user would write for `config`."""
    import json

    lines = [f"[mcp_servers.{config.name}]"]
    if config.transport == STDIO:
        lines += [f"command = {json.dumps(config.command)}", f"args = {json.dumps(list(config.args))}"]
    else:
        lines.append(f"url = {json.dumps(config.url)}")
    if config.startup_timeout:
        lines.append(f"startup_timeout_sec = {config.startup_timeout}")
    if config.tool_timeout:
        lines.append(f"tool_timeout_sec = {config.tool_timeout}")
    return "\n".join(lines) + "\n"


# Pilots: the app size and a bounded wait (pilots spawn tasks; one pause is not enough).
SIZE = (110, 40)
PILOT_TIMEOUT_S = 60.0


async def wait_until(pilot, predicate, timeout: float = PILOT_TIMEOUT_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def connection_of(manager: McpManager, name: str) -> ServerConnection:
    """The manager's connection to `name`: the test configured that server."""
    connection = manager.connection(name)
    assert connection is not None, name
    return connection


async def drive(agent, text: str, approve=True) -> list:
    """Consume a whole turn, answering approvals like a user would; the events, in order."""
    from myrm_tui.agent.events import ApprovalRequest

    events = []
    async for event in agent.turn(text):
        events.append(event)
        if isinstance(event, ApprovalRequest):
            assert event.decision is not None
            event.decision.set_result(approve(event) if callable(approve) else approve)
    return events
