"""Drive the real `myrm` binary in a real terminal (tmux): start, read the screen, quit.

Shared by the tmux tests (a plain module, not a test module, so tests never import each other).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

# Start-up includes importing litellm (seconds on a shared 2-core box): generous but bounded.
SCREEN_TIMEOUT_S = 60.0


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def capture(name: str) -> str:
    return tmux("capture-pane", "-p", "-t", name)


def wait_for(name: str, text: str, timeout: float = SCREEN_TIMEOUT_S) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(name)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def wait_gone(name: str, text: str, timeout: float = SCREEN_TIMEOUT_S) -> str:
    deadline = time.monotonic() + timeout
    screen = capture(name)
    while text in screen:
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} did not go away; the screen was:\n{screen}")
        time.sleep(0.2)
        screen = capture(name)
    return screen


def start_myrm(
    tmp_path: Path, model: str, extra_env: dict[str, str] | None = None, size: tuple[int, int] = (120, 40)
) -> tuple[str, Path, Path]:
    """Run `myrm --model MODEL` in a fresh workspace inside a detached tmux session (120x40 unless
    `size` says otherwise; `extra_env`: more variables for the command); returns (session name,
    workspace, file that receives the exit code)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    exit_file = tmp_path / "exit-code"
    # The variables go in the command itself: a tmux server that is already running starts new
    # sessions with its own environment, not the client's, so `env=` alone would leak the real
    # user config (or another test's) into this one.
    variables = {
        "MYRM_CONFIG_DIR": str(tmp_path / "config"),
        "TERM": "xterm-256color",
        "TEXTUAL_ANIMATIONS": "none",
        "ENABLE_MYRM_TEST_PROVIDERS": "1",  # the scripted/ models (tests/conftest.py)
        **(extra_env or {}),
    }
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in variables.items())
    command = (
        f"cd {shlex.quote(str(workspace))} && env {exports} {sys.executable} -m myrm_tui "
        f"--model {shlex.quote(model)}; echo $? > {shlex.quote(str(exit_file))}; sleep 30"
    )
    name = f"myrm-smoke-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]), command],
        check=True,
        env={**os.environ, **variables},
    )
    return name, workspace, exit_file


def quit_and_exit_code(name: str, exit_file: Path) -> str:
    tmux("send-keys", "-t", name, "C-q")
    deadline = time.monotonic() + SCREEN_TIMEOUT_S
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return exit_file.read_text().strip()
