"""An unhandled exception in the app, in a real terminal: never a silent exit.

The fault is put into the real `myrm` process from outside (a `sitecustomize` on its path makes
F3 start a worker that raises); everything after the raise is the product's own path: Textual's
exception handling, the app's crash report, the command line's exit code and stderr line, the
terminal given back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.tui.tmux_helpers import SCREEN_TIMEOUT_S, capture, start_myrm, tmux, wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# A credential-shaped string in the exception's message: the log and stderr must not carry it.
FAKE_KEY = "sk-ant-api03-" + "Q" * 40

FORCED_CRASH = f"""
import os

if os.environ.get("MYRM_TEST_FORCED_CRASH"):
    import myrm_tui.tui.screens.chat.dialogs as dialogs

    def health(screen):
        async def fail():
            raise RuntimeError("forced crash for the test, with {FAKE_KEY} in it")

        screen.run_worker(fail(), group="forced-crash")

    dialogs.health = health
"""


def terminal_modes(name: str) -> str:
    return tmux("display", "-p", "-t", name, "alt=#{alternate_on} mouse=#{mouse_any_flag}").strip()


@pytest.mark.slow
def test_a_crash_in_a_worker_exits_non_zero_logs_the_traceback_and_says_where(tmp_path: Path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FORCED_CRASH)
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"text": "hello"}]}')
    name, _, exit_file = start_myrm(
        tmp_path,
        f"scripted/{script}",
        # the hook first, then whatever path the run was given (the old code's, to show it failed)
        extra_env={
            "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")])),
            "MYRM_TEST_FORCED_CRASH": "1",
        },
    )
    try:
        wait_for(name, "Welcome to myrm")  # the chat screen (the start screen before it has no F3)
        assert terminal_modes(name) == "alt=1 mouse=1"
        tmux("send-keys", "-t", name, "F3")
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        while not exit_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert exit_file.exists(), f"the app did not end; screen:\n{capture(name)}"
        code = exit_file.read_text().strip()
        assert code not in ("", "0"), "a crash must not exit like a quit"

        log = tmp_path / "config" / "logs" / "tui-crash.log"
        assert log.is_file(), f"no crash log; screen:\n{capture(name)}"
        logged = log.read_text()
        assert "Traceback (most recent call last)" in logged
        assert "RuntimeError: forced crash for the test" in logged
        assert FAKE_KEY not in logged, "the log is scrubbed of credentials"

        screen = " ".join(capture(name).split())  # the line may wrap
        assert "myrm crashed (RuntimeError: forced crash for the test" in screen, screen
        assert str(log) in screen.replace(" ", "") or str(log) in screen, screen
        assert FAKE_KEY not in screen
        assert terminal_modes(name) == "alt=0 mouse=0", "alternate screen and mouse tracking are off"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
