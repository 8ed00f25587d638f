"""Shared parts of the store fault tests: run the real `myrm`, audit a session log.

`log_problems` is the auditor the concurrency figures come from: it reads a history the way a
provider would and names every place where two writers' turns got mixed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
HOLDER = Path(__file__).with_name("session_holder.py")
# A cold `myrm` imports litellm: seconds on a loaded 2-core machine.
CLI_TIMEOUT_S = 240


def clean_env(config_dir: Path, code_root: Path = REPO_ROOT) -> dict[str, str]:
    """No provider keys or MYRM_* settings from the developer's shell; this checkout first."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith(("_API_KEY", "_API_TOKEN"))
    }
    env["MYRM_CONFIG_DIR"] = str(config_dir)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code_root), env.get("PYTHONPATH", "")]))
    return env


@dataclass
class Myrm:
    """The real entry point (`python -m myrm_tui`) in one workspace."""

    workspace: Path
    config_dir: Path
    code_root: Path = REPO_ROOT

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "myrm_tui", *args],
            cwd=self.workspace,
            env=clean_env(self.config_dir, self.code_root),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def __call__(
        self, *args: str, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "myrm_tui", *args],
            cwd=self.workspace,
            env={**clean_env(self.config_dir, self.code_root), **(env or {})},
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )


def make_workspace(tmp_path: Path) -> Myrm:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)  # stops workspace discovery here
    config = tmp_path / "user-config"
    config.mkdir()
    return Myrm(workspace, config)


def tool_then_answer_script(path: Path, turns: int, command: str) -> str:
    """A scripted model whose every turn is one bash call *without an id* (so myrm generates
    it) and then a short answer; returns the `--model` value."""
    steps: list[dict[str, Any]] = []
    for n in range(turns):
        steps.append({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})
        steps.append({"text": f"answer {n}"})
    path.write_text(json.dumps({"turns": steps}), encoding="utf-8")
    return f"scripted/{path}"


def log_problems(history: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every trace of interleaved writers in one history (a session with its fork ancestry):
    a user message right after a user message, an assistant message while calls are open, a
    tool result that does not answer an open call of the message before it (out of place, or
    answered twice), a call id used twice, and calls left without results mid-history."""
    problems: list[str] = []
    open_calls: list[str] = []
    answered: Counter[str] = Counter()
    issued: Counter[str] = Counter()
    previous = None
    for index, message in enumerate(history):
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            answered[call_id] += 1
            if answered[call_id] > 1:
                problems.append(f"#{index}: call {call_id} answered twice")
            elif call_id in open_calls:
                open_calls.remove(call_id)
            else:
                problems.append(f"#{index}: tool result for {call_id} is not after its call")
            previous = role
            continue
        if open_calls:
            problems.append(f"#{index}: {role} message while calls {open_calls} have no result")
            open_calls = []
        if role == "user" and previous == "user":
            problems.append(f"#{index}: two user messages in a row (two writers' turns mixed)")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                issued[call["id"]] += 1
                if issued[call["id"]] > 1:
                    problems.append(f"#{index}: call id {call['id']} issued twice")
                open_calls.append(call["id"])
        previous = role
    return problems


def read_store(workspace: Path) -> dict[str, Any]:
    """Every session: its own rows, its whole history, its parent (read-only, this checkout)."""
    from myrm_tui.store import Store

    with Store.open(workspace, read_only=True) as store:
        out = {}
        for session in store.list_sessions():
            history = store.messages(session.id)
            out[session.id] = {
                "parent": session.parent_id,
                "history": [r.message for r in history],
                "own": [r.message for r in history if r.session_id == session.id],
            }
        return out


# -- real terminals (tmux) ------------------------------------------------------------------------

# Start-up imports litellm (seconds on a shared 2-core box): generous but bounded.
SCREEN_TIMEOUT_S = 90.0


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def start_tui(myrm: Myrm, name: str, *args: str) -> Path:
    """`myrm ARGS` in a detached 120x40 tmux session; returns the file that gets its exit code."""
    exit_file = myrm.config_dir.parent / f"{name}.exit"
    env = {**clean_env(myrm.config_dir), "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    quoted = " ".join(f"'{a}'" for a in args)
    command = f"cd '{myrm.workspace}' && {sys.executable} -m myrm_tui {quoted}; echo $? > '{exit_file}'; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command], check=True, env=env)
    return exit_file


def wait_for_screen(name: str, text: str) -> str:
    import time

    deadline = time.monotonic() + SCREEN_TIMEOUT_S
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-J", "-t", name)
        # Matched with whitespace folded: the app wraps its own lines, and where a sentence breaks
        # depends on the pid and path lengths in it (a 5-digit pid moved "a fork of it" to the
        # next line and the wait timed out).
        if " ".join(text.split()) in " ".join(screen.split()):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def quit_tui(name: str, exit_file: Path) -> str:
    import time

    tmux("send-keys", "-t", name, "C-q")
    deadline = time.monotonic() + SCREEN_TIMEOUT_S
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return exit_file.read_text().strip()
