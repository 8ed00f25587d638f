"""`myrm run` end to end with a scripted model and real MCP servers: the published
`mcp-server-time` from PyPI (from a trusted workspace `.mcp.json`), and the in-tests server over
stdio and over streamable HTTP (from the user's config.toml). Results, errors and a 1 MB result
must land in the store, the prompt and the index; no server process may outlive the run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from myrm_tui.store.store import Store
from tests.mcp.mcp_helpers import CLI_TIMEOUT_S, clean_env, http_config, run_myrm, stdio_config, toml_server

NEEDLE = "ZEBRA-NEEDLE-4242"


def tagged_processes(tag: str) -> list[int]:
    """Processes whose environment carries `tag` (what each server entry passes its server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"MYRM_TEST_TAG={tag}".encode() in environ.split(b"\0") and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def wait_no_tagged(tag: str, timeout: float = 15.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def write_user_servers(config_dir: Path, tag: str, *configs) -> None:
    text = "\n".join(toml_server(c) + f'env = {{ MYRM_TEST_TAG = "{tag}" }}\n' for c in configs)
    (config_dir / "config.toml").write_text(text, encoding="utf-8")


@pytest.mark.slow
def test_run_calls_a_pypi_server_and_the_test_server_over_both_transports(
    workspace, config_dir, http_server, script, tmp_path
):
    tag = uuid.uuid4().hex
    write_user_servers(config_dir, tag, stdio_config("t"), http_config(http_server.url, "h"))
    (workspace / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                        "env": {"MYRM_TEST_TAG": tag},
                    }
                }
            }
        )
    )
    trusted = run_myrm(workspace, config_dir, "trust")
    assert trusted.returncode == 0 and "mcpServers.time" in trusted.stdout, trusted.stderr
    record = tmp_path / "requests.jsonl"
    model = script(
        {
            "text": "calling",
            "tool_calls": [
                {"name": "mcp__time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}},
                {
                    "name": "mcp__time__convert_time",
                    "arguments": {"source_timezone": "Nowhere/Land", "time": "12:00", "target_timezone": "UTC"},
                },
                {"name": "mcp__t__echo", "arguments": {"text": "over stdio"}},
                {"name": "mcp__t__big", "arguments": {}},
                {"name": "mcp__h__echo", "arguments": {"text": "over http"}},
                {"name": "mcp__h__boom", "arguments": {}},
                {"name": "mcp__h__big", "arguments": {}},
            ],
        },
        {"text": "all answered"},
        record=str(record),
    )
    result = run_myrm(workspace, config_dir, "run", "--json", "--approve", "yolo", "--model", model, "ask the servers")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    calls = {c["name"]: c for c in data["tool_calls"]}
    assert (
        calls["mcp__time__get_current_time"]["ok"]
        and '"timezone": "Asia/Tokyo"' in calls["mcp__time__get_current_time"]["content"]
    )
    assert calls["mcp__time__convert_time"]["status"] == "error"  # the server's own error, readable
    assert "Nowhere/Land" in calls["mcp__time__convert_time"]["content"]
    assert calls["mcp__t__echo"]["content"] == "over stdio" and calls["mcp__h__echo"]["content"] == "over http"
    assert calls["mcp__h__boom"]["status"] == "error"
    big_handles = {calls[name]["vault_handle"] for name in ("mcp__t__big", "mcp__h__big")}
    assert len(big_handles) == 1 and None not in big_handles, "the same megabyte, stored once by its hash"
    (handle,) = big_handles
    assert data["text"].endswith("all answered")

    store = Store.open(workspace)
    try:
        rows = [m.message for m in store.messages(data["session_id"]) if m.role == "tool"]
        assert [r["name"] for r in rows] == [c["name"] for c in data["tool_calls"]]
        assert NEEDLE in store.vault.read_text(handle)
        assert any(hit.handle == handle for hit in store.search(data["session_id"], NEEDLE))
    finally:
        store.close()
    second = json.loads(record.read_text().splitlines()[1])
    sent = [m for m in second if m.get("role") == "tool"]
    assert len(sent) == 7 and all(len(json.dumps(m)) < 40_000 for m in sent)
    assert wait_no_tagged(tag) == [], "a server outlived myrm run"


@pytest.mark.slow
def test_ctrl_c_during_a_hung_call_stops_the_turn_and_the_servers(workspace, config_dir, script):
    tag = uuid.uuid4().hex
    write_user_servers(config_dir, tag, stdio_config("t"))
    model = script({"tool_calls": [{"name": "mcp__t__hang", "arguments": {}}]}, {"text": "never"})
    process = subprocess.Popen(
        [sys.executable, "-m", "myrm_tui", "run", "--approve", "yolo", "--model", model, "hang"],
        cwd=workspace,
        env=clean_env(config_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    stderr = process.stderr
    assert stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stderr.readline, "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + CLI_TIMEOUT_S
        while not any(line.startswith("→ mcp__t__hang") for line in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tagged_processes(tag), f"the server is not running: {lines}"
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(timeout=10)
    err = "".join(lines)
    assert process.returncode == 130, err
    assert wait_no_tagged(tag) == []


@pytest.mark.slow
def test_run_without_servers_never_imports_the_sdk(workspace, config_dir, script):
    model = script({"text": "plain"})
    code = (
        f"import sys, runpy; sys.argv = ['myrm', 'run', '--model', {model!r}, 'hi'];"
        "import atexit; atexit.register(lambda: print('SDK' if 'mcp' in sys.modules else 'NO-SDK', "
        "file=sys.stderr)); runpy.run_module('myrm_tui', run_name='__main__')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workspace,
        env=clean_env(config_dir),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().endswith("NO-SDK")
