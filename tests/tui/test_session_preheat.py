"""The opt-in cache preheat at session open (tui/session/session_preheat.py), in the real app on the
scripted provider: it goes out before any message, after a pending trust decision, with the
prefix the first message then sends; off, nothing is sent and no session is created early."""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.agent.cache_warmth import PREHEAT_STAND_IN, PURPOSE_PREHEAT
from myrm_tui.store import event_kinds
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.chat.screen import ChatScreen
from myrm_tui.tui.screens.trust import TrustScreen
from tests.tui.test_trust_dialog import app_for, hostile_clone
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, type_text, wait_until


def _scripted(tmp_path: Path) -> tuple[str, Path]:
    record = tmp_path / "requests.jsonl"
    path = tmp_path / "preheat_script.json"
    turns = [{"text": "warm"}, {"text": "hello back"}]
    path.write_text(json.dumps({"turns": turns, "record": record.name}), encoding="utf-8")
    return f"scripted/{path}", record


def _requests(record: Path) -> list[list[dict]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


async def test_the_preheat_runs_at_session_open_and_the_first_message_reuses_its_prefix(workspace, store, tmp_path):
    model, record = _scripted(tmp_path)
    app = MyrmApp(workspace, scripted_settings(model, cache_preheat=True), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat.preheat_probe is not None, what="preheat at open")
        (preheat,) = _requests(record)
        assert [m["role"] for m in preheat] == ["system", "user"] and PREHEAT_STAND_IN in json.dumps(preheat[1])
        session = app.chat.session_id
        usage = store.events(session, kind=event_kinds.USAGE)
        assert [e.data.get("purpose") for e in usage] == [PURPOSE_PREHEAT]
        await send(pilot, app, "hello there")
        first = _requests(record)[1]
        assert first[0] == preheat[0], "the first message goes after the preheated system prefix"
        assert app.chat.session_id == session and store.get_session(session).title.startswith("hello there")


async def test_off_nothing_is_sent_and_an_unused_preheated_session_is_not_left_behind(workspace, store, tmp_path):
    model, record = _scripted(tmp_path)
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat.model is not None, what="model resolved")
        await pilot.pause(0.3)
        assert _requests(record) == [] and app.chat.session is None and not app.chat.preheat_started

    model, record = _scripted(tmp_path)
    app = MyrmApp(workspace, scripted_settings(model, cache_preheat=True), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat.preheat_probe is not None, what="preheat at open")
        opened = app.chat.session_id
    assert opened is not None and all(s.id != opened for s in store.list_sessions()), "quit unused: row removed"
    assert app.resume_session_id is None


async def test_a_pending_trust_question_holds_the_preheat_until_it_is_answered(workspace, store, tmp_path):
    model, record = _scripted(tmp_path)
    hostile_clone(workspace, model)
    from myrm_tui.settings.paths import user_config_file

    user_config = user_config_file()  # the test's private config dir (conftest)
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text("cache_preheat = true\n", encoding="utf-8")  # the user's own choice
    app = app_for(workspace, store, model)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="trust dialog")
        await pilot.pause(0.5)
        assert _requests(record) == [] and not app.chat.preheat_started, "nothing before the trust decision"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat")
        await wait_until(pilot, lambda: app.chat.preheat_probe is not None, what="preheat after the answer")
        assert len(_requests(record)) == 1


async def test_leaving_an_unused_preheated_session_for_a_new_one_removes_its_row(workspace, store, tmp_path):
    model, _record = _scripted(tmp_path)
    app = MyrmApp(workspace, scripted_settings(model, cache_preheat=True), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat.preheat_probe is not None, what="preheat at open")
        opened = app.chat.session_id
        await type_text(pilot, "/clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.session_id != opened, what="new session screen")
        assert opened is not None and all(s.id != opened for s in store.list_sessions()), "left unused: row removed"
