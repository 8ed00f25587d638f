"""Edit, pick an earlier message and queue in a real terminal (tmux): the keys as a terminal
really sends them (Up, Alt+Up as `ESC [1;3A`, Delete), which headless pilots never parse.

The turn that is "running" waits on an approval, so typing during it is not a race."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from myrm_tui.store import Store
from tests.tui.tmux_helpers import capture, quit_and_exit_code, start_myrm, tmux, wait_for, wait_gone

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed; the real-terminal test needs it"
)


def _type(name: str, text: str) -> None:
    tmux("send-keys", "-t", name, "-l", text)
    tmux("send-keys", "-t", name, "Enter")


@pytest.mark.slow
def test_edit_an_earlier_message_and_queue_during_a_turn(tmp_path: Path):
    # The scripted model answers turn N when the request holds N assistant messages, so the fork
    # (which shares "reply one") is answered by turn 1 again.
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"text": "reply one"},
                    {"text": "reply two"},
                    {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}]},
                    {"text": "not run"},
                    {"text": "reply to the queue"},
                ]
            }
        )
    )
    name, workspace, exit_file = start_myrm(tmp_path, f"scripted/{script}")
    try:
        wait_for(name, "Message myrm")
        _type(name, "first question")
        wait_for(name, "reply one")
        _type(name, "second question")
        wait_for(name, "reply two")
        tmux("send-keys", "-t", name, "Up")
        wait_for(name, "editing your last message")
        tmux("send-keys", "-t", name, "M-Up")
        wait_for(name, "editing message 1 of 2")
        tmux("send-keys", "-t", name, "M-Down")
        wait_for(name, "editing your last message")
        tmux("send-keys", "-t", name, "Escape")
        wait_gone(name, "editing your last message")
        tmux("send-keys", "-t", name, "Up")
        wait_for(name, "editing your last message")
        _type(name, " (edited)")
        wait_for(name, "Edit: forked from")
        screen = wait_for(name, "reply two")  # the fork's own answer
        assert "second question (edited)" in screen

        _type(name, "run it")
        wait_for(name, "to answer")  # the approval waits: the turn is running
        _type(name, "keep this one")
        _type(name, "drop this one")
        wait_for(name, "queued: drop this one")
        tmux("send-keys", "-t", name, "DC")  # Delete on the empty prompt removes the last one
        wait_gone(name, "queued: drop this one")
        assert "queued: keep this one" in capture(name)
        tmux("send-keys", "-t", name, "C-y")  # to the approval
        wait_for(name, "back to your message")
        tmux("send-keys", "-t", name, "n")
        wait_for(name, "reply to the queue")
        assert quit_and_exit_code(name, exit_file) == "0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)

    store = Store.open(workspace)
    try:
        sessions = store.list_sessions()
        parent = next(s for s in sessions if s.parent_id is None)
        fork = next(s for s in sessions if s.parent_id == parent.id)
        asks = [r.message["content"] for r in store.messages(parent.id) if r.role == "user"]
        assert asks == ["first question", "second question"]  # the original is untouched
        asks = [r.message["content"] for r in store.messages(fork.id) if r.role == "user"]
        assert asks == ["first question", "second question (edited)", "run it", "keep this one"]
    finally:
        store.close()
