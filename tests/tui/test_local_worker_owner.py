"""The app owns the embedded model's worker: it stops when the app ends, not when the Python
process does (that one worker serves every call of its owner is tests/llm/test_llm_local_provider.py).

Before: the worker sat in a module-level registry and outlived the app (stopped only by the
process's exit hook), so whatever ran next in the process inherited a loaded model it never asked
for.
"""

from __future__ import annotations

import pytest

from myrm_tui.tui.app import MyrmApp
from tests.llm.worker_processes import worker_pids
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

pytestmark = pytest.mark.llama
# A turn on the embedded model: worker start, load and a full prefill of the system prompt on two
# shared cores; the pilots' default 30 s wait is too short on a busy machine.
TURN_WAIT_S = 300.0


async def send(pilot, app, text: str) -> None:
    ended = app.chat_screen.turns_ended
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.chat_screen.turns_ended > ended, timeout=TURN_WAIT_S, what="turn end")


@pytest.mark.slow
async def test_the_apps_local_model_worker_stops_when_the_app_ends(workspace, store) -> None:
    assert not worker_pids()
    app = MyrmApp(workspace, scripted_settings("local/smollm2", max_output_tokens=8), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "Say hi")
        running = worker_pids()
        assert len(running) == 1, running
    assert not worker_pids(), "the worker ended with the app"


@pytest.mark.slow
async def test_the_chat_starts_loading_the_local_model_while_the_user_types(workspace, store) -> None:
    """The warm-up (after the first paint, before any message) starts the embedded model's worker,
    so the first message does not wait for the weights; the first turn then uses that worker."""
    assert not worker_pids()
    app = MyrmApp(workspace, scripted_settings("local/smollm2", max_output_tokens=8), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat_opened and app.chat_screen.ready.is_set(), what="warm-up")
        started = worker_pids()
        assert len(started) == 1, "the worker runs before any message"
        await send(pilot, app, "Say hi")
        assert worker_pids() == started, "the first turn used the worker the warm-up started"
    assert not worker_pids()
