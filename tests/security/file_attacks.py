"""Driving file-side attacks the way a user's session meets them: tool calls through `Agent.turn`
with a scripted model, and the real `myrm` command in a subprocess. Evidence is gathered on the
host: what changed outside the workspace, never what a tool said it did.

The subprocess runs the package this test imported (its folder goes first on PYTHONPATH), so the
same test can be pointed at an older checkout to show it fails there.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import myrm_tui
from myrm_tui.agent.agent import Agent
from myrm_tui.agent.events import ApprovalRequest, ToolFinished
from myrm_tui.settings.settings import Settings
from myrm_tui.store import Store

PACKAGE_ROOT = Path(myrm_tui.__file__).resolve().parents[1]
# A cold `myrm` imports litellm: several seconds on a loaded 2-core machine.
CLI_TIMEOUT_S = 180
TEMP_SUFFIX = ".myrm-tmp"


def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def script_file(folder: Path, *turns: dict[str, Any]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"script-{len(list(folder.glob('script-*.json')))}.json"
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"scripted/{path}"


@dataclass
class Turn:
    session_id: str = ""
    finished: list[ToolFinished] = field(default_factory=list)


async def turn(workspace: Path, scripts: Path, calls: list[dict[str, Any]], **values: Any) -> Turn:
    """One agent turn (yolo unless told) whose model makes `calls` at once, then says done."""
    model = script_file(scripts, {"tool_calls": calls}, {"text": "done"})
    values.setdefault("approval", "yolo")
    store = Store.open(workspace)
    try:
        session = store.create_session(model=model)
        settings = Settings().with_values(model=model, **values)
        agent = Agent(store=store, session_id=session.id, settings=settings, workspace=workspace)
        log = Turn(session.id)
        async for event in agent.turn("go"):
            if isinstance(event, ApprovalRequest):
                assert event.decision is not None
                event.decision.set_result(True)
            elif isinstance(event, ToolFinished):
                log.finished.append(event)
        return log
    finally:
        store.close()


def myrm(
    workspace: Path, config_dir: Path, *args: str, input: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real entry point, as a user runs it in `workspace` (no terminal: no questions)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    clean["MYRM_CONFIG_DIR"] = str(config_dir)
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), clean.get("PYTHONPATH", "")]))
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=clean,
        input=input,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def tree_state(*roots: Path) -> dict[str, str]:
    """Every entry under the roots, links not followed: a file's mode and content hash, a link's
    target, a folder's mode. Equal before and after means nothing there was touched."""
    seen: dict[str, str] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in [*dirs, *files]:
                path = Path(folder) / name
                info = path.lstat()
                if stat.S_ISLNK(info.st_mode):
                    seen[str(path)] = "-> " + os.readlink(path)
                elif stat.S_ISREG(info.st_mode):
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
                    seen[str(path)] = f"{oct(info.st_mode)} {digest}"
                else:
                    seen[str(path)] = oct(info.st_mode)
        info = root.lstat()
        seen[str(root)] = oct(info.st_mode)
    return seen


def stray_temps(*roots: Path) -> list[str]:
    return [
        str(Path(folder) / name)
        for root in roots
        for folder, _dirs, files in os.walk(root)
        for name in files
        if name.endswith(TEMP_SUFFIX)
    ]


def git(workspace: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=workspace,
        check=True,
        capture_output=True,
    )


# A separate process swapping workspace entry NAME with a symlink to TARGET by atomic exchanges
# (renameat2 RENAME_EXCHANGE) as fast as it can, until STOP exists: every walk through NAME sees
# one or the other about half the time each. NAME is an existing folder, or, when FIRST is given,
# a symlink to FIRST made here. Argv: workspace, name, target, stop, max seconds[, first].
SWAPPER = r"""
import ctypes, os, sys, time
workspace, name, target, stop, max_s = sys.argv[1:5] + [float(sys.argv[5])]
os.chdir(workspace)
if len(sys.argv) > 6:
    os.symlink(sys.argv[6], name)
os.symlink(target, name + ".swap")
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = name.encode(), (name + ".swap").encode()
swaps = 0
print("ready", flush=True)
deadline = time.monotonic() + max_s
while time.monotonic() < deadline and not os.path.exists(stop):
    for _ in range(200):
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
            swaps += 1
if swaps % 2:  # leave NAME as it started
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
print(swaps, flush=True)
"""
