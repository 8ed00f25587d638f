"""Manual compaction and background summary work on one engine at once (threads).

Why: the compact command's event and the idle-time `maintain` both touch the engine's rows,
views and rendered entries; the engine's lock must keep them from interleaving, and whatever
order they run in, the stored state and the prompt must stay consistent.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time

from myrm_tui.context.engine import ContextEngine, TurnInput
from myrm_tui.context.summary.client import CallResult, SummaryModel
from myrm_tui.context.window.tokens import count_message_tokens
from tests.context.engine_helpers import info

MODEL = "gpt-4o"
ROUNDS = 6


def feed(store, session, turns, start=1):
    for n in range(start, start + turns):
        cid = f"c{n}"
        call = {"name": "file_read", "arguments": json.dumps({"path": f"src/module_{n}.py"})}
        for message in (
            {"role": "user", "content": f"step {n}: look at module_{n}.py"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": cid, "type": "function", "function": call}]},
            {
                "role": "tool",
                "tool_call_id": cid,
                "name": "file_read",
                "content": "\n".join(f"line {i} of module_{n}" for i in range(80)),
            },
            {"role": "assistant", "content": f"module_{n} read; decision: keep its API."},
        ):
            store.append_message(session, message, count_message_tokens(message, MODEL))


class OverlapProbe:
    """Wraps the history's mutating methods: records when two threads are inside at once."""

    def __init__(self, history):
        self.inside: set[int] = set()
        self.overlaps = 0
        self.guard = threading.Lock()
        for name in ("sync", "render", "invalidate_from"):
            setattr(history, name, self._wrapped(getattr(history, name)))

    def _wrapped(self, method):
        def run(*args, **kwargs):
            me = threading.get_ident()
            with self.guard:
                if self.inside - {me}:
                    self.overlaps += 1
                self.inside.add(me)
            try:
                time.sleep(0.0005)  # widen the window an unlocked engine would interleave in
                return method(*args, **kwargs)
            finally:
                with self.guard:
                    self.inside.discard(me)

        return run


def test_compaction_and_background_summaries_do_not_interleave(store):
    session = store.create_session(MODEL).id
    feed(store, session, 20)
    engine = ContextEngine(store, session, clock=lambda: 0.0)
    probe = OverlapProbe(engine.history)
    turn = TurnInput("sys", [], info(8_000), 1024, now=0.0)

    async def slow_model(messages, max_output_tokens):
        await asyncio.sleep(0.002)
        return CallResult("not a summary at all", 500, 5, 0.0)

    chain = [SummaryModel("openai/lite", 16_000, call=slow_model)]
    failures: list[BaseException] = []

    def compact_repeatedly() -> None:
        try:
            for n in range(ROUNDS):
                feed(store, session, 2, start=100 + 2 * n)
                engine.summarize_now(turn) if n % 2 else engine.compact(turn, tier="full")
                engine.assemble(turn)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    async def background() -> None:
        for _ in range(ROUNDS * 2):
            await engine.maintain(turn, models=chain, breaker=engine.summary_breaker)
            await engine.prepare_folds(turn, models=chain, breaker=engine.summary_breaker)

    worker = threading.Thread(target=compact_repeatedly)
    worker.start()
    asyncio.run(background())
    worker.join(timeout=120)
    assert not worker.is_alive() and not failures, failures
    assert probe.overlaps == 0, "compaction and background work ran on the engine state at once"

    # The store and the prompt agree, whatever order the two ran in.
    history = engine.history
    assert history.tokens == sum(e.tokens for e in history.entries)
    prompt = engine.assemble(turn)
    assert prompt.tokens + prompt.budget.output_reserve <= turn.model.context_window
    calls = {c["id"] for m in prompt.messages for c in m.get("tool_calls") or ()}
    results = [m["tool_call_id"] for m in prompt.messages if m["role"] == "tool"]
    assert sorted(calls) == sorted(results), "every call answered once, no orphan result"
    for handle in set(re.findall(r"\[summary (S\d+)", json.dumps(prompt.messages))):
        assert store.get_summary(session, handle)["status"] == "active", f"{handle} is shown but not active"
    fresh = ContextEngine(store, session, clock=lambda: 0.0)
    assert fresh.assemble(turn).messages == prompt.messages, "a fresh engine builds the same prompt"
