"""Headless `myrm run` and the bash sandbox: no flag grants the network, and it says so truly."""

from __future__ import annotations

import json
import socket
import sys
import threading

import pytest


@pytest.fixture
def listener():
    """A real loopback TCP server that counts the connections reaching it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    hits: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            hits.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    stop.set()
    thread.join()
    server.close()


def _connect(port: int) -> str:
    return (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('connected')\""
    )


def test_headless_yolo_does_not_grant_the_network_and_says_what_would(myrm, script, listener):
    port, hits = listener
    model = script(
        {"tool_calls": [{"name": "bash", "arguments": {"command": _connect(port), "network": True}}]},
        {"text": "I could not reach the network."},
    )
    result = myrm("run", "--json", "--approve", "yolo", "--model", model, "fetch it")
    assert result.returncode == 0, result.stderr
    assert "asks for network access, which the sandbox only allows after a person's yes" in result.stderr
    assert "sandbox_network = true" in result.stderr and "--approve yolo allows it" not in result.stderr
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "denied" and "needs a person's yes" in call["content"]
    assert hits == []


def test_the_sandbox_network_setting_lets_a_headless_command_connect(myrm, script, listener):
    port, hits = listener
    model = script(
        {"tool_calls": [{"name": "bash", "arguments": {"command": _connect(port), "network": True}}]},
        {"text": "Connected."},
    )
    result = myrm("run", "--json", "--approve", "yolo", "--model", model, "fetch it", env={"MYRM_SANDBOX_NETWORK": "1"})
    assert result.returncode == 0, result.stderr
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "ok" and call["content"].startswith("connected")
    assert len(hits) == 1


def test_without_network_true_a_headless_command_stays_offline(myrm, script, listener):
    port, hits = listener
    model = script({"tool_calls": [{"name": "bash", "arguments": {"command": _connect(port)}}]}, {"text": "ok"})
    result = myrm("run", "--json", "--approve", "yolo", "--model", model, "fetch it")
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "error" and "no network" in call["content"]
    assert hits == []


def _sandbox_section(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = lines.index("Sandbox")
    return [line.strip() for line in lines[start + 1 :] if line.strip()][:2]


def test_doctor_shows_the_sandbox_and_that_it_really_starts(myrm, script):
    result = myrm.without_local_model("doctor", env={"MYRM_MODEL": script({"text": "hi"})})
    first, second = _sandbox_section(result.stdout)
    assert first.startswith("✓ workspace-write: bubblewrap") and first.endswith("starts a sandbox here")
    assert second.startswith("· network: off unless a command is approved for it")


def test_doctor_shows_an_explicit_off(myrm, script):
    result = myrm.without_local_model("doctor", env={"MYRM_MODEL": script({"text": "hi"}), "MYRM_SANDBOX": "off"})
    assert _sandbox_section(result.stdout)[0] == (
        "· sandbox = off: bash commands run unsandboxed; approvals are the only guard"
    )


def test_doctor_never_pretends_when_bwrap_is_missing(myrm, script, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    # A real process: the sandbox probe reads PATH once per process and keeps the answer.
    env = {"MYRM_MODEL": script({"text": "hi"}), "PATH": str(empty)}
    result = myrm.process_without_local_model("doctor", env=env)
    first, hint = _sandbox_section(result.stdout)
    assert hint.startswith("· approvals are the only guard")
    assert first.startswith("✗ workspace-write is configured but bash runs WITHOUT a sandbox: bwrap was not found")
    assert "apt install bubblewrap" in first
    assert result.returncode == 0, "a missing sandbox is reported, not fatal: bash still runs under approvals"
