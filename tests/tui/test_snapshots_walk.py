"""A fresh clone's walk through the quick start at 80x24, as SVG snapshots: the first screen on
the embedded model, F1's key table, a tool approval, and the ring after a model switch.

Deterministic by construction, like test_snapshots.py: fixed workspace and session id in the
status line (snapshot_helpers.settle), a scripted model at a fixed path with fixed usage figures
(the ring's percentage must not depend on the temp folder's name), the seeded session of the
other snapshots for the model switch. After re-recording, look at the SVGs: each must show what
its name says.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from myrm_tui.settings import Settings
from myrm_tui.settings.typed_values import Approval
from myrm_tui.store import Store
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from tests.tui.snapshot_helpers import make_app, seed, settle
from tests.tui.tui_pilot_helpers import type_text, wait_until

SMALL = (80, 24)
# A fixed path: the scripted model's name (and so the status line) contains it.
SCRIPTS = Path("/tmp/myrm-snapshots")
EMBEDDED = "local/smollm2"
# A hang still fails, but a first turn under CI-like load (measured 30+ s) does not.
FIRST_TURN_TIMEOUT_S = 120.0


def quick_start_app(workspace, store, model: str = EMBEDDED, approval: Approval = "ask") -> MyrmApp:
    """`myrm` in a fresh clone: no config, the model named, a new session."""
    settings = Settings().with_values(model=model, approval=approval, animations=False)
    return MyrmApp(
        workspace, settings, store=store, watch_themes=False, config_path=Path("/home/user/.config/myrm/config.toml")
    )


def approval_script() -> str:
    SCRIPTS.mkdir(exist_ok=True)
    path = SCRIPTS / "walk-approval.json"
    call = {
        "id": "call_1",
        "name": "file_write",
        "arguments": {"path": "notes.md", "content": "# Notes\n\nFirst line.\n"},
    }
    script = {
        "context_window": 32_000,
        "turns": [
            {"tool_calls": [call], "usage": {"prompt_tokens": 4_200, "completion_tokens": 30}},
            {"text": "Done."},
        ],
    }
    path.write_text(json.dumps(script))
    return f"scripted/{path}"


def test_walk_welcome_80x24(snap_compare, workspace, store):
    app = quick_start_app(workspace, store)
    assert snap_compare(app, terminal_size=SMALL, run_before=settle)


def test_walk_f1_80x24(snap_compare, workspace, store):
    app = quick_start_app(workspace, store)

    async def open_help(pilot):
        await settle(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: pilot.app.screen.id == "help-screen", what="F1")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SMALL, run_before=open_help)


@pytest.fixture
def fixed_workspace():
    """A workspace at a fixed path: the approval names the folder it writes in."""
    root = SCRIPTS / "project"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    with Store.open(root) as opened:
        yield root, opened
    shutil.rmtree(root, ignore_errors=True)


def test_walk_tool_approval_80x24(snap_compare, fixed_workspace):
    workspace, store = fixed_workspace
    app = quick_start_app(workspace, store, approval_script())

    async def ask(pilot):
        await settle(pilot)
        await type_text(pilot, "write my notes")
        await pilot.press("enter")
        screen = pilot.app.chat_screen
        # the first model call of the process builds the agent stack: slow on a loaded 2-core box
        await wait_until(pilot, lambda: screen.query(ApprovalPrompt), timeout=FIRST_TURN_TIMEOUT_S, what="approval")
        await settle(pilot)  # the session exists now: its id in the status line is the fixed one
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SMALL, run_before=ask)


def test_walk_ring_after_a_model_switch_80x24(snap_compare, workspace, store, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the same warning toast on every machine
    app = make_app(workspace, store, seed(store))  # the last prompt: 80% of gpt-4o's declared 10k

    async def switch(pilot):
        await settle(pilot)
        screen = pilot.app.chat_screen
        await type_text(pilot, "/model openai/gpt-4o-mini")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.context.reading.window == 128_000, what="the ring to follow")
        await wait_until(
            pilot,
            lambda: not [w for w in pilot.app.workers if w.group == "apply-settings" and w.is_running],
            what="switch",
        )
        pilot.app.clear_notifications()  # toasts time out: on a slow machine the picture would lose them
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SMALL, run_before=switch)
