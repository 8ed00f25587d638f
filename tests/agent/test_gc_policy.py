"""A turn holds the collector's full passes back and lets them run after it; the TUI's hold wins.

Why: a full pass walks every tracked object (250-450 ms after litellm's import) and ran inside
requests of `myrm run`, the ACP server and `myrm replay`, which had no policy of their own; the
TUI holds them itself and runs the pass once the user stops typing (agent/gc_policy.py).
"""

from __future__ import annotations

import gc

import pytest

from myrm_tui.agent.gc_policy import DEFAULT_THRESHOLDS, HELD_GEN2_THRESHOLD, hold_full_passes
from myrm_tui.agent.session_runtime import SessionRuntime
from tests.agent.agent_helpers import settings_for


@pytest.fixture(autouse=True)
def _thresholds_restored():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


async def test_a_turn_holds_full_passes_and_lets_them_run_after_it(store, workspace, script):
    gc.set_threshold(*DEFAULT_THRESHOLDS)
    model = script({"text": "hi"})
    runtime = SessionRuntime(store=store, session_id=store.create_session(model=model).id, workspace=workspace)
    during = [gc.get_threshold()[2] async for _ in runtime.send("hello", settings_for(model))]
    assert during and set(during) == {HELD_GEN2_THRESHOLD}
    assert gc.get_threshold() == DEFAULT_THRESHOLDS
    assert gc.get_freeze_count() > 0  # the heap of the first turn is out of the collector's reach


async def test_a_turn_leaves_a_hold_it_did_not_make(store, workspace, script):
    gc.set_threshold(*DEFAULT_THRESHOLDS)
    assert hold_full_passes()  # as the TUI does when a message is sent
    assert not hold_full_passes()
    model = script({"text": "hi"})
    runtime = SessionRuntime(store=store, session_id=store.create_session(model=model).id, workspace=workspace)
    async for _ in runtime.send("hello", settings_for(model)):
        pass
    assert gc.get_threshold()[2] == HELD_GEN2_THRESHOLD  # the TUI runs the pass and releases
