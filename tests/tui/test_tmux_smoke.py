"""The real binary in a real terminal (tmux): key parsing, the alt screen, settings, panel, quit.

Headless pilots never parse terminal escape sequences; this does. The model is the scripted
provider, so no network is involved.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.tui.tmux_helpers import (
    capture,
    quit_and_exit_code,
    start_myrm,
    tmux,
    wait_for,
    wait_gone,
)

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed; the real-terminal smoke test needs it"
)


@pytest.mark.slow
def test_real_terminal_session(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Hello from the **scripted** model."}]}))
    name, _, exit_file = start_myrm(tmp_path, f"scripted/{script}")
    try:
        wait_for(name, "Message myrm")
        tmux("send-keys", "-t", name, "-l", "hello there")
        tmux("send-keys", "-t", name, "Enter")
        screen = wait_for(name, "Hello from the scripted model.")
        assert "hello there" in screen
        wait_for(name, "%")  # the ring shows a percentage once the request was made
        tmux("send-keys", "-t", name, "C-l")  # compact now: a one-message history has nothing to reduce
        wait_for(name, "Nothing to compact")
        tmux("send-keys", "-t", name, "C-n")  # fork: the dialog offers both choices
        wait_for(name, "fork with summary")
        tmux("send-keys", "-t", name, "Escape")
        wait_gone(name, "fork with summary")
        tmux("send-keys", "-t", name, "C-o")  # quick model switch
        wait_for(name, "Switch model")
        tmux("send-keys", "-t", name, "Escape")
        wait_gone(name, "Switch model")
        tmux("send-keys", "-t", name, "F2")
        wait_for(name, "Settings")
        # A setting near the top: the footer names the config path, which under pytest-xdist
        # (`popen-gw1` in the path) wraps onto more lines and pushes later settings out of view.
        wait_for(name, "lite_model")
        tmux("send-keys", "-t", name, "Escape")
        wait_gone(name, "lite_model")
        tmux("send-keys", "-t", name, "C-b")
        screen = wait_for(name, "Compactions")
        assert "no summaries yet" in screen
        tmux("send-keys", "-t", name, "C-b")
        wait_gone(name, "Compactions")
        assert quit_and_exit_code(name, exit_file) == "0"
        assert "Message myrm" not in capture(name)  # the alt screen is gone
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


@pytest.mark.slow
@pytest.mark.llama
def test_real_terminal_on_the_embedded_local_model(tmp_path: Path):
    """`myrm --model local/smollm2` end to end: llama.cpp in-process, plain chat, a real reply."""
    name, workspace, exit_file = start_myrm(tmp_path, "local/smollm2")
    try:
        wait_for(name, "Message myrm")
        tmux("send-keys", "-t", name, "-l", "What is the capital of France?")
        tmux("send-keys", "-t", name, "Enter")
        wait_for(name, "no tool calling", timeout=120)
        wait_for(name, "%", timeout=120)  # the request was made: the ring shows its share
        from myrm_tui.store import Store

        deadline = time.monotonic() + 120
        reply = None
        while reply is None and time.monotonic() < deadline:
            with Store.open(workspace, read_only=True) as store:
                sessions = store.list_sessions()
                rows = store.messages(sessions[0].id) if sessions else []
                reply = next((r.message.get("content") for r in rows if r.role == "assistant"), None)
            time.sleep(0.5)
        assert reply and reply.strip(), "the local model answered something"
        assert quit_and_exit_code(name, exit_file) == "0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
