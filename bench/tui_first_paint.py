"""Issue 17, TUI target 2: myrm's first paint within 1.5× of a bare Textual app with one Input.

Why a bare app as the yardstick: it pays for the interpreter, Textual's import and one frame,
which myrm cannot avoid either; everything above it is ours. Both run in this venv, one after
the other, so load on this shared box hits both alike.

Why tmux: a headless run stops at "composed"; in a real terminal the frame also has to be
written and drawn. Each run starts the app in a detached 120×40 tmux session and polls
`tmux capture-pane` until the app's text shows (the bare app's placeholder; myrm's prompt
placeholder), timed from just before `tmux new-session`. The poll period bounds the resolution.

Run: `python -m bench.tui_bench --only first_paint [--runs N]`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# 5 ms: well under the ~100 ms differences being measured, and tmux answers a capture in ~2 ms.
POLL_S = 0.005
# A run that has not painted in this long is reported as failed, not waited for.
PAINT_TIMEOUT_S = 30.0
BARE_MARKER = "bare-textual-ready"
BARE_APP = f"""
from textual.app import App
from textual.widgets import Input

class Bare(App):
    def compose(self):
        yield Input(placeholder={BARE_MARKER!r})

Bare().run()
"""
# The start of myrm's prompt placeholder (tui/prompt/prompt_text.py), shown in its first frame: the start
# screen's prompt (tui/screens/start.py), where the user can already type.
MYRM_MARKER = "Message myrm"
# The chat screen's status line for a new session: the chat screen has replaced the start screen.
CHAT_MARKER = "session new"
# The idle session that keeps the private tmux server alive between runs (measure_first_paint).
HOLD_SESSION = "bench-paint-hold"


def _capture(session: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], env=env, capture_output=True, text=True, check=False
    )
    return proc.stdout


def paint_once(command: Sequence[str], markers: Sequence[str], env: dict[str, str], cwd: Path) -> list[float]:
    """Seconds from `tmux new-session` until each of `markers` is first on the pane; raises
    RuntimeError on timeout."""
    session = f"bench-paint-{uuid.uuid4().hex[:8]}"
    line = " ".join(_quote(part) for part in command)
    start = time.monotonic()
    started = subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", str(cwd), line],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if started.returncode != 0:
        raise RuntimeError(f"tmux new-session failed: {started.stderr.strip()[:200]}")
    seen: dict[str, float] = {}
    try:
        while True:
            pane = _capture(session, env)
            for marker in markers:
                if marker not in seen and marker in pane:
                    seen[marker] = time.monotonic() - start
            if len(seen) == len(markers):
                return [seen[m] for m in markers]
            if time.monotonic() - start > PAINT_TIMEOUT_S:
                raise RuntimeError(f"no {markers!r} after {PAINT_TIMEOUT_S:.0f} s: {pane[-200:]!r}")
            time.sleep(POLL_S)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], env=env, check=False, capture_output=True)


def _quote(part: str) -> str:
    return "'" + part.replace("'", "'\\''") + "'"


def measure_first_paint(
    runs: int,
    child_env: Callable[[Path], dict[str, str]],
    scripted_model: Callable[[Path, list[dict[str, Any]]], str],
    summary: Callable[[Sequence[float]], dict[str, Any]],
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Bare and myrm alternate run by run, so a burst of load hits both."""
    if shutil.which("tmux") is None:
        return {"status": "tmux not installed"}
    times: dict[str, list[float]] = {"bare": [], "myrm": [], "myrm_chat": []}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tui-paint-") as tmp:
        home = Path(tmp)
        work = home / "ws"
        work.mkdir()
        env = child_env(home)
        env.pop("TMUX", None)  # a nested tmux refuses to start a session from inside another
        model = scripted_model(home, [{"text": "ok"}])
        apps = {
            "bare": ([sys.executable, "-c", BARE_APP], [BARE_MARKER]),
            "myrm": ([sys.executable, "-m", "myrm_tui", "--model", model], [MYRM_MARKER, CHAT_MARKER]),
        }
        socket_env = {**env, "TMUX_TMPDIR": str(home)}  # a private tmux server, never the user's
        # One idle session keeps that server up for the whole run: when a run's kill-session ended
        # the last session, the server exited, and the next run's new-session now and then reached
        # the dying server and failed ("server exited unexpectedly"), losing that run.
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", HOLD_SESSION, "-x", "120", "-y", "40", "cat"],
            env=socket_env,
            check=True,
        )
        for index in range(runs):
            for name, (command, markers) in apps.items():
                try:
                    seen = paint_once(command, markers, socket_env, work)
                    times[name].append(seen[0] * 1000)
                    if name == "myrm":
                        times["myrm_chat"].append(seen[1] * 1000)
                except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
                    failures.append(f"{name}: {exc}")
            log(f"  first paint run {index + 1}/{runs}")
        subprocess.run(["tmux", "kill-server"], env=socket_env, check=False, capture_output=True)
    bare, myrm = summary(times["bare"]), summary(times["myrm"])
    ratio = myrm["median"] / bare["median"] if bare["median"] and myrm["median"] else None
    return {
        "status": "ok" if not failures else f"{len(failures)} failed: {failures[0][:200]}",
        "failures": failures,
        "poll_ms": POLL_S * 1000,
        "bare_ms": bare,
        "myrm_ms": myrm,
        "myrm_chat_ms": summary(times["myrm_chat"]),
        "myrm_vs_bare": ratio,
        "cpus": os.cpu_count(),
    }
