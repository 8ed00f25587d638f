"""Secrets an MCP server prints, or an MCP URL carries, never reach CLI output.

The attack (or the accident): a server writes its own token on stderr when it fails (`token=…`,
a provider key), and a remote server's URL carries `user:password@`. Doctor quoted the server's
last stderr line and the URL as they were, and `myrm run` printed the same line as a warning on
stderr; both get pasted into issues and CI logs. The line is now redacted where it is quoted
(mcp/connection.py) and every CLI line once more on its way out (cli_commands/output.py).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from tests.security.clone_cli import Clone, make_clone

OPENAI_KEY = "sk-proj-Zq8Lm2Xv9Tb4Nc7Rw1Ys5Hd3Kf6Gj0Pa2Qe8Uo4Ii"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
URL_PASSWORD = "hunter2-correct-horse-battery"
SECRETS = (OPENAI_KEY, GITHUB_TOKEN, URL_PASSWORD)

# A real stdio MCP server (the official SDK's server API) that cannot log in: it says so on
# stderr with its own credentials in the line, as many servers do, and exits before the handshake.
SERVER = f"""
import sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("leaky")

@server.tool()
def echo(text: str) -> str:
    return text

print("leaky: starting, upstream token={OPENAI_KEY}", file=sys.stderr, flush=True)
print("fatal: upstream login failed (token={OPENAI_KEY}, github={GITHUB_TOKEN})", file=sys.stderr, flush=True)
sys.exit(3)
"""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def leaky(tmp_path: Path) -> Clone:
    clone = make_clone(tmp_path)
    script = tmp_path / "leaky_server.py"
    script.write_text(SERVER)
    url = f"http://alice:{URL_PASSWORD}@127.0.0.1:{closed_port()}/mcp"
    clone.user_config(
        f"mcp_startup_timeout = 20\n"
        f"[mcp_servers.leaky]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(script))}]\n"
        f"[mcp_servers.remote]\nurl = {json.dumps(url)}\n"
    )
    # The repository's own server entry, waiting for trust: doctor lists it with its URL.
    other = f"http://bob:{URL_PASSWORD}@127.0.0.1:{closed_port()}/mcp"
    (clone.root / ".mcp.json").write_text(json.dumps({"mcpServers": {"theirs": {"type": "http", "url": other}}}))
    return clone


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text[-3000:])


@pytest.mark.slow
def test_doctor_redacts_a_servers_stderr_and_an_mcp_url(leaky: Clone):
    result = leaky.myrm("doctor")
    assert "leaky (stdio, user): did not start" in result.stdout, result.stdout[-3000:]
    assert "its last stderr line: fatal: upstream login failed" in result.stdout
    assert "remote (http, user): did not start" in result.stdout
    assert "theirs (workspace): not started, waits for your trust" in result.stdout
    assert "[REDACTED:" in result.stdout
    assert_no_secret(result.stdout + result.stderr)


@pytest.mark.slow
def test_run_stderr_redacts_a_servers_stderr_and_an_mcp_url(leaky: Clone, tmp_path: Path):
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}]}))
    result = leaky.myrm("run", "--trust", "--model", f"scripted/{script}", "hello", test_providers=True)
    assert result.returncode == 0, result.stderr
    assert "MCP server leaky did not start" in result.stderr, result.stderr
    assert "fatal: upstream login failed" in result.stderr
    assert "MCP server remote did not start" in result.stderr
    assert_no_secret(result.stdout + result.stderr)
