"""Edit a sent message, retry the last answer, fork from an earlier message: each forks the
session (the store is append-only) and the original stays exactly as it was."""

from __future__ import annotations

import pytest

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.transcript.edit_retry import edit_target, retry_plan
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.edit_hint import EditHint
from tests.tui.snapshot_helpers import SNAP_SIZE, make_app, seed, settle
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, send, type_text, wait_until


def _contents(store, session_id, role):
    return [r.message["content"] for r in store.messages(session_id) if r.role == role]


async def _two_turns(pilot, app) -> str:
    await send(pilot, app, "one")
    await send(pilot, app, "two")
    return app.chat.session_id


async def _forked(pilot, app, parent: str) -> str:
    """Wait for the fork's screen to send its message and finish the turn."""
    await wait_until(pilot, lambda: app.chat.session_id not in (None, parent), what="fork opened")
    await wait_until(pilot, lambda: app.chat_screen.turns_ended >= 1, what="turn in the fork")
    return app.chat.session_id


async def test_up_on_empty_prompt_edits_the_last_message_in_a_fork(workspace, store, script):
    model = script({"text": "answer one"}, {"text": "answer two"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        parent = await _two_turns(pilot, app)
        before = [r.id for r in store.messages(parent)]
        screen = app.chat_screen
        await pilot.press("up")
        hint = screen.query_one(EditHint)
        assert screen.prompt.text == "two" and screen.editing is not None
        assert hint.display and "editing your last message" in hint.text and "Esc cancels" in hint.text
        last_bubble = screen.mounted_turns()[-1]
        assert last_bubble.has_class("-editing")
        screen.prompt.clear()
        await type_text(pilot, "deux")
        await pilot.press("enter")
        child = await _forked(pilot, app, parent)
        # the fork: the earlier turn shared, the edited text answered there
        record = store.get_session(child)
        assert record.parent_id == parent
        assert _contents(store, child, "user") == ["one", "deux"]
        assert _contents(store, child, "assistant") == ["answer one", "answer two"]
        # the original is untouched, row for row
        assert [r.id for r in store.messages(parent)] == before
        assert _contents(store, parent, "user") == ["one", "two"]
        assert [u.text for u in app.chat_screen.query(UserMessage)] == ["one", "deux"]
        assert any(n.startswith("Edit: forked from") for n in notices(app))


async def test_esc_cancels_the_edit_and_a_second_up_walks_the_history(workspace, store, script):
    model = script({"text": "answer one"}, {"text": "answer two"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        parent = await _two_turns(pilot, app)
        screen = app.chat_screen
        await pilot.press("up")
        assert screen.editing is not None
        await pilot.press("escape")
        assert screen.editing is None and screen.prompt.text == ""
        assert not screen.query_one(EditHint).display
        assert not any(u.has_class("-editing") for u in screen.query(UserMessage))
        # Up again: editing; Up once more leaves editing for the history, past the duplicate "two"
        await pilot.press("up")
        assert screen.editing is not None
        await pilot.press("up")
        assert screen.editing is None and screen.prompt.text == "one"
        assert screen.prompt.prompt_history.browsing
        await pilot.press("down", "down")
        assert screen.prompt.text == ""
        assert app.chat.session_id == parent and not [s for s in store.list_sessions() if s.parent_id == parent]


async def test_alt_up_picks_an_earlier_message_and_forks_before_it(workspace, store, script):
    model = script({"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        parent = await _two_turns(pilot, app)
        await send(pilot, app, "three")
        before = [r.id for r in store.messages(parent)]
        screen = app.chat_screen
        await pilot.press("up", "alt+up")
        assert screen.prompt.text == "two"
        assert "message 2 of 3" in screen.query_one(EditHint).text
        bubbles = screen.mounted_turns()
        assert [b.has_class("-editing") for b in bubbles] == [False, True, False]
        await pilot.press("alt+up", "alt+up")  # stops at the first message
        assert screen.prompt.text == "one" and "message 1 of 3" in screen.query_one(EditHint).text
        await pilot.press("alt+down")
        assert screen.prompt.text == "two"
        await type_text(pilot, "!")
        await pilot.press("enter")
        child = await _forked(pilot, app, parent)
        assert store.get_session(child).parent_id == parent
        assert _contents(store, child, "user") == ["one", "two!"]
        assert [r.id for r in store.messages(parent)] == before


async def test_editing_the_first_message_starts_a_new_session(workspace, store, script):
    model = script({"text": "answer one"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "one")
        parent = app.chat.session_id
        assert parent is not None
        await pilot.press("up")
        assert "new session" in app.chat_screen.query_one(EditHint).text
        await type_text(pilot, "!")
        await pilot.press("enter")
        child = await _forked(pilot, app, parent)
        assert _contents(store, child, "user") == ["one!"]
        assert store.get_session(child).parent_id is None
        assert _contents(store, parent, "user") == ["one"]


@pytest.mark.slow
async def test_retry_regenerates_the_last_answer_in_a_fork(workspace, store, script):
    model = script({"text": "answer one"}, {"text": "answer two"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("f5")
        assert "send a message first" in notices(app)[-1]
        parent = await _two_turns(pilot, app)
        before = store.messages(parent)
        await pilot.press("f5")
        child = await _forked(pilot, app, parent)
        rows = store.messages(child)
        # the ask is shared with the parent (stored once), the answer is the fork's own
        assert [r.message["content"] for r in rows if r.role == "user"] == ["one", "two"]
        assert [r.id for r in rows if r.role == "user"] == [r.id for r in before if r.role == "user"]
        assert rows[-1].role == "assistant" and rows[-1].session_id == child
        assert rows[-1].id != before[-1].id
        assert store.messages(parent) == before
        # /retry does the same from the prompt
        await type_text(pilot, "/retry")
        await pilot.press("enter")
        grandchild = await _forked(pilot, app, child)
        assert store.get_session(grandchild).parent_id == child


async def test_edit_and_retry_keys_can_be_remapped_and_are_listed(workspace, store, script):
    model = script({"text": "answer one"}, {"text": "answer two"})
    settings = Settings(keymap={"chat.retry": "f9", "chat.interrupt": "f8"}).with_values(model=model, approval="ask")
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "one")
        parent = app.chat.session_id
        screen = app.chat_screen
        help_text = screen.help_markdown()
        for binding_id in ("chat.edit_last", "chat.edit_earlier", "chat.retry", "chat.cancel_queued"):
            assert binding_id in help_text
        assert "`/retry`" in help_text
        await pilot.press("up")
        assert "F8 cancels" in screen.query_one(EditHint).text
        await pilot.press("escape")  # no longer the cancel key: nothing happens
        assert screen.editing is not None and screen.prompt.text == "one"
        await pilot.press("f8")
        assert screen.editing is None and screen.prompt.text == ""
        await pilot.press("f5")  # no longer retry
        assert app.chat.session_id == parent
        await pilot.press("f9")
        await _forked(pilot, app, parent)


def test_edit_target_skips_summaries_and_knows_where_to_fork(store):
    sid = store.create_session("scripted/x", "t").id
    first = store.append_message(sid, {"role": "user", "content": "hi"}, 1)
    answer = store.append_message(sid, {"role": "assistant", "content": "yo"}, 1)
    store.append_message(sid, {"role": "user", "content": "synthetic", "myrm_synthetic": True}, 1)
    second = store.append_message(
        sid,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look at @a.py"},
                {"type": "image_url", "image_url": {"url": "vault://x"}},
            ],
        },
        1,
    )
    records = store.messages(sid)
    last = edit_target(records)
    assert last is not None and last.message_id == second.id and last.text == "look at @a.py"
    assert (last.position, last.count, last.plain) == (2, 2, False)
    assert last.fork_at == second.id - 1  # the row just before it, whatever its kind
    earlier = edit_target(records, 1)
    assert earlier is not None and earlier.message_id == first.id and earlier.fork_at is None
    assert edit_target(records, 2) is None
    plan = retry_plan(records)
    assert plan is not None and not plan.reuses_ask and plan.fork_at == last.fork_at
    assert answer.id < second.id


def test_snapshot_editing_an_earlier_message(snap_compare, workspace, store):
    """The hint line above the prompt and the highlighted bubble of the message being edited."""
    sid = seed(store)
    store.append_message(sid, {"role": "user", "content": "Now add a test for empty input."}, 8)
    store.append_message(sid, {"role": "assistant", "content": "Added `test_parse_empty`; 13 tests pass."}, 12)
    app = make_app(workspace, store, sid)

    async def edit_first(pilot):
        await settle(pilot)
        await pilot.press("up", "alt+up")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=edit_first)
