"""After the app exits, the real terminal shows how to resume the session:
printed once the alternate screen is gone, and only when the session has messages."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from myrm_tui.store import Store
from tests.tui.tmux_helpers import capture, quit_and_exit_code, start_myrm, tmux, wait_for


@pytest.mark.slow
def test_exit_prints_the_resume_command_for_a_session_with_messages(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Noted."}]}))
    name, workspace, exit_file = start_myrm(tmp_path, f"scripted/{script}")
    try:
        wait_for(name, "Message myrm")
        tmux("send-keys", "-t", name, "-l", "remember this")
        tmux("send-keys", "-t", name, "Enter")
        wait_for(name, "Noted.")
        assert quit_and_exit_code(name, exit_file) == "0"
        store = Store.open(workspace, read_only=True)
        try:
            session = store.latest_session()
        finally:
            store.close()
        assert session is not None
        screen = wait_for(name, "Resume this session")
        assert f"Resume this session: myrm --session {session.id[:8]} (or myrm -c)" in screen
        assert "Message myrm" not in screen  # printed on the normal screen, after the app's
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


def test_exit_without_a_message_prints_no_hint(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "unused"}]}))
    name, _workspace, exit_file = start_myrm(tmp_path, f"scripted/{script}")
    try:
        wait_for(name, "Message myrm")
        assert quit_and_exit_code(name, exit_file) == "0"
        assert "Resume this session" not in capture(name)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
