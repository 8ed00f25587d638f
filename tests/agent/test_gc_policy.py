"""A turn holds the collector's full passes back and lets them run after it; holds add up.

Why: a full pass walks every tracked object (250-450 ms after litellm's import) and ran inside
requests of `myrm run`, the ACP server and `myrm replay`, which had no policy of their own; the
TUI holds them itself and runs the pass once the user stops typing (agent/gc_policy.py).
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest

from myrm_tui.agent import gc_policy
from myrm_tui.agent.gc_policy import DEFAULT_THRESHOLDS, HELD_GEN2_THRESHOLD
from myrm_tui.agent.session_runtime import SessionRuntime
from tests.agent.agent_helpers import settings_for


@pytest.fixture(autouse=True)
def _no_holds_before_or_after(monkeypatch):
    before = gc.get_threshold()
    monkeypatch.setattr(gc_policy, "_turns", 0)
    monkeypatch.setattr(gc_policy, "_chat_holds", False)
    gc.set_threshold(*DEFAULT_THRESHOLDS)
    yield
    gc.set_threshold(*before)


def _recorder(calls: list[str], name: str) -> Callable[..., int]:
    def record(*_args: object) -> int:
        calls.append(name)
        return 0

    return record


def _held() -> bool:
    return gc.get_threshold()[2] == HELD_GEN2_THRESHOLD


async def test_a_turn_holds_full_passes_and_lets_them_run_after_it(store, workspace, script):
    model = script({"text": "hi"})
    runtime = SessionRuntime(store=store, session_id=store.create_session(model=model).id, workspace=workspace)
    during = [_held() async for _ in runtime.send("hello", settings_for(model))]
    assert during and all(during)
    assert gc.get_threshold() == DEFAULT_THRESHOLDS


async def test_a_turn_leaves_the_chats_hold_to_the_chat(store, workspace, script):
    gc_policy.hold_until_chat_collects()  # as the TUI does when a message is sent
    model = script({"text": "hi"})
    runtime = SessionRuntime(store=store, session_id=store.create_session(model=model).id, workspace=workspace)
    async for _ in runtime.send("hello", settings_for(model)):
        pass
    assert _held()  # the chat runs the pass once the user stops typing
    gc_policy.chat_collected()
    assert gc.get_threshold() == DEFAULT_THRESHOLDS


def test_overlapping_turns_keep_the_hold_until_the_last_ends():
    gc_policy.hold_full_passes()  # session A's turn
    gc_policy.hold_full_passes()  # session B's turn, in the same server
    gc_policy.release_full_passes()  # A ends
    assert _held()
    gc_policy.release_full_passes()  # B ends
    assert gc.get_threshold() == DEFAULT_THRESHOLDS


def test_the_heap_is_frozen_once_after_a_full_pass(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 0)
    monkeypatch.setattr(gc, "collect", _recorder(calls, "collect"))
    monkeypatch.setattr(gc, "freeze", _recorder(calls, "freeze"))
    gc_policy.freeze_startup_heap(collect=True)
    assert calls == ["collect", "freeze"]  # the turn's garbage is not frozen with the heap


async def test_the_idle_step_after_a_turn_freezes_the_heap(store, workspace, script, monkeypatch):
    model = script({"text": "hi"})
    runtime = SessionRuntime(store=store, session_id=store.create_session(model=model).id, workspace=workspace)
    async for _ in runtime.send("hello", settings_for(model)):
        pass
    calls: list[str] = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 0)
    monkeypatch.setattr(gc, "collect", _recorder(calls, "collect"))
    monkeypatch.setattr(gc, "freeze", _recorder(calls, "freeze"))
    assert runtime.current is not None
    await runtime.current.maintain()
    assert calls == ["collect", "freeze"]
