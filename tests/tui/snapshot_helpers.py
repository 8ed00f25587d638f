"""The seeded session and app that the SVG snapshot tests share (test_snapshots.py and the tests
that start from the same seeded screens). A helper module, not a test module: a test file that
imports another one drags in its tests and fixtures, and breaks when that file is renamed.

Deterministic by construction: a stored session and stored engine events with fixed numbers
(no live timings), a fixed model name and paths in the status line, no cursor blink.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from tests.tui.tui_pilot_helpers import wait_until

SNAP_SIZE = (120, 40)
MODEL = "openai/gpt-4o"
FIXED_WORKSPACE = Path("/home/user/project")
FIXED_SESSION = "5e55a0c1-0000-4000-8000-000000000000"

REPLY = (
    "The failing test was `test_parse`: the parser dropped the last line.\n\n"
    "```python\ndef parse(text):\n    return text.splitlines()\n```\n\nAll 12 tests pass now."
)


def seed(store, *, usage_tokens: int = 7_000) -> str:
    """A short conversation with a tool call, plus the engine's records of it."""
    sid = store.create_session(MODEL, "fix the parser").id
    store.append_message(sid, {"role": "user", "content": "Fix the failing parser test please."}, 9)
    store.append_message(
        sid,
        {
            "role": "assistant",
            "content": "Let me run the tests first.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
                }
            ],
        },
        20,
    )
    store.append_message(
        sid,
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "bash",
            "content": "F.\nFAILED test_parse\n1 failed, 11 passed",
        },
        12,
    )
    store.append_message(sid, {"role": "assistant", "content": REPLY}, 40)
    budget = {
        "window": 10_000,
        "output_reserve": 1_000,
        "safety_margin": 256,
        "prompt_limit": 8_744,
        "fixed_tokens": 2_100,
        "history_tokens": 4_900,
        "utilization": 0.8,
    }
    stages = [
        {"stage": "sync", "tokens_in": 0, "tokens_out": 0, "items": 2, "ms": 0.5},
        {"stage": "render", "tokens_in": 4_000, "tokens_out": 4_900, "items": 0, "ms": 1.5},
    ]
    event = {
        "id": 1,
        "tier": "full",
        "trigger": "threshold",
        "tokens_before": 9_100,
        "tokens_after": 6_200,
        "saved": 2_900,
        "items": 14,
        "ops": {"remove": 14},
        "ms": 38.0,
    }
    store.append_event(sid, "compaction", {**event, "state": "done"})
    store.append_event(
        sid,
        "assemble",
        {
            "tokens": 6_200,
            "budget": budget,
            "stages": stages,
            "breakers": {},
            "ladder": {"tier": "light", "action": "monitoring", "deferred": None},
            "event": event,
            "cache_break": {"position": 3, "previous_len": 9, "reason": "compaction rewrote history"},
            "ms": 2.0,
        },
    )
    store.append_event(
        sid,
        "usage",
        {
            "model": MODEL,
            "prompt_tokens": 6_300,
            "completion_tokens": 80,
            "cached_read_tokens": 0,
            "cached_write_tokens": 6_000,
            "cost": 0.02,
        },
    )
    store.append_event(
        sid,
        "assemble",
        {
            "tokens": usage_tokens,
            "budget": budget,
            "stages": stages,
            "breakers": {},
            "event": None,
            "cache_break": None,
            "ms": 2.0,
            "ladder": {"tier": "full", "action": "deferred: provider cache is warm", "deferred": "full"},
        },
    )
    store.append_event(
        sid,
        "usage",
        {
            "model": MODEL,
            "prompt_tokens": usage_tokens,
            "completion_tokens": 120,
            "cached_read_tokens": 6_000,
            "cached_write_tokens": 900,
            "cost": 0.01,
        },
    )
    return sid


def make_app(workspace, store, session_id=None) -> MyrmApp:
    settings = Settings().with_values(model=MODEL, animations=False)
    if session_id is not None:
        # With the seeded session, the model is declared with its reports' window (10k, output
        # 1k: the prompt limit of 8,744 they record), as a config's `[models."openai/gpt-4o"]`
        # would: the ring measures the last prompt against the current model's window, and the
        # registry's 128k would not be the 80% the pictures show.
        settings = dataclasses.replace(settings, models={MODEL: {"context_window": 10_000, "max_output_tokens": 1_000}})
    return MyrmApp(
        workspace,
        settings,
        session_id=session_id,
        store=store,
        watch_themes=False,
        config_path=Path("/home/user/.config/myrm/config.toml"),
    )


async def settle(pilot) -> None:
    app = pilot.app
    screen = app.chat_screen
    await wait_until(pilot, lambda: screen.ready.is_set(), what="warm-up")
    screen.status.set(workspace=FIXED_WORKSPACE, session_id=FIXED_SESSION if app.chat.session_id else None)
    screen.prompt.cursor_blink = False
    for reply in screen.query(AssistantMessage):

        def rendered(r: AssistantMessage = reply) -> bool:
            return r.markdown.source == r.text

        await wait_until(pilot, rendered, what="markdown")
    await pilot.pause()
