"""`ContextEngine.settled` returns only once idle-step work running in a worker thread is done.

Why: an event or a scan of the idle step cannot be stopped once its thread runs, and the ACP
server closes its store right after cancelling the idle step (acp/server.py, `close`): the
store must not close under it.
"""

from __future__ import annotations

import asyncio
import threading

from myrm_tui.context.engine import ContextEngine


async def test_settled_waits_for_the_idle_work_that_holds_the_engine(store):
    engine = ContextEngine(store, store.create_session("gpt-4o-mini").id, clock=lambda: 0.0)
    holding, release = threading.Event(), threading.Event()

    def idle_work() -> None:
        with engine._lock:  # what `compact_ahead` and the warm-up hold in their worker thread
            holding.set()
            release.wait(5)

    worker = threading.Thread(target=idle_work)
    worker.start()
    assert holding.wait(5)
    waiting = asyncio.create_task(engine.settled())
    await asyncio.sleep(0.2)
    assert not waiting.done()
    release.set()
    await asyncio.wait_for(waiting, 5)
    worker.join(5)
