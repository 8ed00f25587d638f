"""The idle cache keep-alive after a model switch, through the TUI's driver (tui/session/cache_keepalive.py)
on a real ChatSession, its SessionRuntime and live agents on the scripted provider: after `/model`
the probe goes to the model the next message goes to, never to the one the last went to (its
cache would be kept warm for nothing, and the new model's stays cold)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from myrm_tui.agent.cache_warmth import PURPOSE_KEEPALIVE
from myrm_tui.store import event_kinds
from myrm_tui.tui.session.cache_keepalive import CacheKeepAlive, KeepAliveHost
from myrm_tui.tui.session.chat_session import ChatSession
from tests.agent.agent_helpers import settings_for

USAGE = {"prompt_tokens": 900, "completion_tokens": 1, "cached_read_tokens": 850, "cached_write_tokens": 0}
# Far past any provider's cache TTL after the turn: the keep-alive is due.
IDLE_S = 3_600.0


class IdleApp:
    """What the driver reads of the app: the chat session and an idle chat screen; workers are
    kept to be awaited by the test (Textual would run them on its loop)."""

    def __init__(self, chat: ChatSession):
        self.chat_opened = True
        self.chat = chat
        self.screen = SimpleNamespace(turn_running=False, compacting=False)
        self.workers: list[Any] = []

    def run_worker(self, work: Any, **options: Any) -> None:
        self.workers.append(work)


def _scripted(tmp_path: Path, name: str, *answers: str) -> tuple[str, Path]:
    record = tmp_path / f"{name}.jsonl"
    turns = [{"text": text, "usage": USAGE} for text in answers]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": turns, "record": str(record)}), encoding="utf-8")
    return f"scripted/{path}", record


def _requests(record: Path) -> list[list[dict[str, Any]]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


async def _one_turn(chat: ChatSession, text: str) -> None:
    chat.agent(text)  # as the turn runner does: built (or rebuilt) for this message's settings
    runtime = chat.runtime
    assert runtime is not None
    async for _event in runtime.send(text):
        pass


async def test_after_model_switch_the_keepalive_pings_the_model_the_next_message_goes_to(store, workspace, tmp_path):
    old, old_record = _scripted(tmp_path, "old", "The tests pass.", "x")
    new, new_record = _scripted(tmp_path, "new", "x", "Next answer.")
    chat = ChatSession(store, settings_for(old, cache_keepalive=True), workspace, model=old)
    await _one_turn(chat, "run the tests")
    assert len(_requests(old_record)) == 1

    chat.choose_session_model(new)  # `/model NEW` for this session, while idle
    runtime = chat.runtime
    assert runtime is not None
    later = (runtime.engine.cache.last_call_at or 0.0) + IDLE_S
    runtime.engine.clock = lambda: later  # the user stays away past the TTL
    app = IdleApp(chat)
    CacheKeepAlive(cast(KeepAliveHost, app))._poll()
    [work] = app.workers
    probe = await work
    assert probe is not None and probe.purpose == PURPOSE_KEEPALIVE

    assert len(_requests(old_record)) == 1, "the old model was pinged"
    [sent] = _requests(new_record)
    said = json.dumps(sent)
    assert "run the tests" in said and "The tests pass." in said  # the conversation the next request starts with
    usage = store.events(chat.session_id, kind=event_kinds.USAGE)
    assert [(e.data.get("purpose"), e.data.get("model")) for e in usage][-1] == (PURPOSE_KEEPALIVE, new)

    # The next message goes to the new model on the agent the keep-alive warmed, and the switch is
    # still announced in its view.
    agent = chat.agent("and now?")
    switch = chat.take_switch()
    assert agent.model_name == new and switch is not None and (switch.old, switch.new) == (old, new)


async def test_without_a_switch_the_keepalive_resends_the_last_request_to_the_same_model(store, workspace, tmp_path):
    model, record = _scripted(tmp_path, "model", "Done.", "x")
    chat = ChatSession(store, settings_for(model, cache_keepalive=True), workspace, model=model)
    await _one_turn(chat, "hello")
    runtime = chat.runtime
    assert runtime is not None
    agent = runtime.current
    later = (runtime.engine.cache.last_call_at or 0.0) + IDLE_S
    runtime.engine.clock = lambda: later
    app = IdleApp(chat)
    CacheKeepAlive(cast(KeepAliveHost, app))._poll()
    [work] = app.workers
    assert await work is not None
    turn, probe = _requests(record)
    assert probe == turn  # byte for byte: a full cache hit
    assert runtime.current is agent  # nothing rebuilt
