"""Escape injection against the real binary in a real terminal (tmux), as an attacker would.

Headless pilots never pass through a terminal; this does. tmux obeys OSC 2 (the pane title)
and, with `set-clipboard on`, OSC 52 (each write becomes a paste buffer), so a leaked sequence
is observable: the test fails if any poisoned channel (model text, a file a tool reads, a
command's output, tool arguments and names, a session title) changes the title or the
clipboard. A canary window first proves this tmux does obey both sequences, so the test cannot
pass just because the terminal ignored them.

Runs on a private tmux server (its own socket in tmp_path), so it never touches anyone else's sessions.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from myrm_tui.store import Store

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed; the real-terminal test needs it"
)

# Start-up imports litellm (seconds on a shared 2-core box): generous but bounded.
SCREEN_TIMEOUT_S = 60.0
ST = "\x1b\\"  # String Terminator: Textual drops BEL, so ST is the terminator that would work


def osc52(label: str) -> str:
    return f"\x1b]52;c;{base64.b64encode(label.encode()).decode()}{ST}"


def poison(channel: str) -> str:
    """A clipboard write and a title change, each naming the channel that carried it."""
    return f"{osc52('clip-' + channel)}\x1b]2;pwned-{channel}{ST}\x1b]0;pwned0-{channel}\x07\x9b2J\u202e"


class Tmux:
    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.socket = str(tmp_path / "tmux.sock")  # a private server, gone with tmp_path
        self.env = env  # the server, started by the first call, passes it to every pane
        self.config = tmp_path / "tmux.conf"
        self.config.write_text("set -g set-clipboard on\nset -g allow-rename on\n", encoding="utf-8")

    def __call__(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, "-f", str(self.config), *args],
            check=True,
            capture_output=True,
            text=True,
            env=self.env,
        ).stdout

    def buffers(self) -> str:
        return self("list-buffers", "-F", "#{buffer_sample}")

    def title(self, target: str) -> str:
        return self("display-message", "-p", "-t", target, "#{pane_title}").strip()

    def wait_for(self, target: str, text: str) -> str:
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        screen = ""
        while time.monotonic() < deadline:
            screen = self("capture-pane", "-p", "-t", target)
            if text in screen:
                return screen
            time.sleep(0.2)
        # An attack that erased the screen shows up here: say what else it did.
        raise AssertionError(
            f"{text!r} never appeared; clipboard buffers {self.buffers()!r}, pane title "
            f"{self.title(target)!r}; the screen was:\n{screen}"
        )

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], check=False, capture_output=True)


@pytest.mark.slow
def test_poisoned_channels_never_reach_the_real_terminal(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "poison.txt").write_text(f"build notes {poison('file')} end\n", encoding="utf-8")
    with Store.open(workspace) as store:  # what `myrm run - < issue.txt` leaves behind
        store.create_session("scripted/x", f"{poison('title')} fix the login bug")
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "text": f"Reading {poison('model')} now.",
                        "tool_calls": [
                            {"id": "r", "name": "file_read", "arguments": {"path": "poison.txt"}},
                            {"id": "n", "name": f"evil{poison('name')}", "arguments": {}},
                            {
                                "id": "c",
                                "name": "bash",
                                "arguments": {"command": f"cat poison.txt; exit 3 # {poison('args')}"},
                            },
                        ],
                    },
                    {"text": f"Summary {poison('stream')} all-done-marker", "chunk_size": 3},
                ]
            }
        ),
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "MYRM_CONFIG_DIR": str(tmp_path / "config"),
        "TERM": "xterm-256color",
        "TEXTUAL_ANIMATIONS": "none",
    }
    tmux = Tmux(tmp_path, env)
    try:
        # The canary: a plain shell printing the same sequences changes title and clipboard.
        tmux(
            "new-session", "-d", "-s", "canary", "-x", "80", "-y", "10", f"printf '{poison('canary')}' | cat; sleep 60"
        )
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        while "clip-canary" not in tmux.buffers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "clip-canary" in tmux.buffers() and "pwned" in tmux.title("canary")
        tmux("delete-buffer")

        command = f"cd {workspace} && {sys.executable} -m myrm_tui --model scripted/{script}; sleep 60"
        tmux("new-session", "-d", "-s", "app", "-x", "140", "-y", "45", command)
        tmux.wait_for("app", "Message myrm")
        tmux("send-keys", "-t", "app", "-l", "read the notes")
        tmux("send-keys", "-t", "app", "Enter")
        tmux.wait_for("app", "Ctrl+Y to answer")  # the approval shows the poisoned command
        # An approval ignores keys in its first 0.3 s, counted from before it was drawn: once it
        # is on screen, 0.5 s more is always past that. Then move to it on purpose and allow.
        time.sleep(0.5)
        tmux("send-keys", "-t", "app", "C-y")
        tmux.wait_for("app", "back to your message")
        tmux("send-keys", "-t", "app", "y")
        screen = tmux.wait_for("app", "all-done-marker")
        assert "\\x1b]52;c;" in screen  # the sequences are on screen, as text
        tmux("send-keys", "-t", "app", "C-r")  # the sessions screen lists the poisoned title
        tmux.wait_for("app", "Y2xpcC10aXRsZQ==")  # base64 of clip-title, now plain text
        tmux("send-keys", "-t", "app", "Escape")
        tmux("send-keys", "-t", "app", "C-q")
        time.sleep(1.0)  # let the last frames reach tmux before reading its state
        assert tmux.buffers() == "", f"a clipboard write got through: {tmux.buffers()!r}"
        assert "pwned" not in tmux.title("app"), tmux.title("app")
    finally:
        tmux.kill()
