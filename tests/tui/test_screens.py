"""Fork, sessions, settings and model switching, driven through keys and slash commands."""

from __future__ import annotations

import json
import tomllib

import pytest
from textual.widgets import Collapsible, Input, OptionList, Select, Static, Switch

from myrm_tui.settings import SETTINGS
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.dialogs import ConfirmScreen, InputScreen
from myrm_tui.tui.screens.fork import ForkScreen
from myrm_tui.tui.screens.model_picker import ModelPicker
from myrm_tui.tui.screens.sessions import SessionsScreen, session_tree
from myrm_tui.tui.screens.settings import SettingsScreen
from myrm_tui.tui.transcript.export_target import default_export_path
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.tui_pilot_helpers import (
    SIZE,
    field_of,
    notices,
    screen_now,
    screen_of,
    scripted_settings,
    send,
    type_text,
    wait_until,
    write_script,
)


@pytest.mark.slow
async def test_fork_key_offers_honest_choices_and_opens_the_fork(workspace, store, script):
    model = script({"text": "first answer"}, {"text": "answer in the fork"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+n")
        assert "send a message first" in notices(app)[-1]
        await send(pilot, app, "start here")
        parent = app.chat.session_id
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, ForkScreen), what="fork dialog")
        choices = app.screen.query_one(OptionList)
        labels = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        assert labels[0].startswith("fork (full history)")
        assert labels[1] == "fork with summary"
        assert not choices.get_option_at_index(1).disabled  # the agent offers fork_with_summary
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.session_id not in (None, parent), what="fork opened")
        child = store.get_session(app.chat.session_id)
        assert child.parent_id == parent
        # until its first request the fork's ring shows the parent's last reading; spend is its own
        await wait_until(pilot, lambda: app.chat_screen.context.session_id == child.id, what="fork ring")
        assert app.chat_screen.context.reading.used is not None and app.chat_screen.context.spend.calls == 0
        assert any(n.startswith("Forked from “start here”") for n in notices(app))
        # the fork shows the shared history and continues on its own
        await wait_until(
            pilot, lambda: [u.text for u in app.chat_screen.query(UserMessage)] == ["start here"], what="shared history"
        )
        await send(pilot, app, "only in the fork")
        assert [m.message["content"] for m in store.messages(parent)][-1] == "first answer"
        assert len(store.messages(child.id)) == 4
        # /fork does the same from the prompt; Esc cancels
        await type_text(pilot, "/fork")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ForkScreen), what="fork dialog again")
        await pilot.press("escape")
        assert app.screen is app.chat_screen and app.chat.session_id == child.id


def test_session_tree_indents_forks_under_their_parent(store):
    root = store.create_session("m", "root")
    store.append_message(root.id, {"role": "user", "content": "x"}, 1)
    other = store.create_session("m", "other")
    child = store.fork(root.id, title="child")
    grandchild = store.fork(child.id, title="grandchild")
    tree = [(s.title, depth) for s, depth in session_tree(store.list_sessions())]
    assert tree.index(("child", 1)) == tree.index(("root", 0)) + 1
    assert tree.index(("grandchild", 2)) == tree.index(("child", 1)) + 1
    assert ("other", 0) in tree and len(tree) == 4
    assert {other.id, grandchild.id} <= {s.id for s in store.list_sessions()}


async def test_sessions_screen_resume_rename_delete_export(workspace, store, script):
    model = script({"text": "unused"})
    old = store.create_session(model, "old work")
    store.append_message(old.id, {"role": "user", "content": "old question"}, 3)
    store.append_message(old.id, {"role": "assistant", "content": "old **answer**"}, 3)
    fork = store.fork(old.id, title="old work (fork)")
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, what="list")
        screen = screen_of(app, SessionsScreen)
        assert [(r.session.title, r.depth, r.messages) for r in screen.rows] == [
            ("old work", 0, 2),
            ("old work (fork)", 1, 2),
        ]
        text = str(screen.query_one(OptionList).get_option_at_index(1).prompt)
        assert "└ old work (fork)" in text and "2 msgs" in text
        # delete the parent: the store refuses (it has a fork) and the error is shown
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.click("#yes")
        await wait_until(pilot, lambda: "has forks" in notices(app)[-1], what="refusal")
        assert store.get_session(old.id)
        # rename the fork
        await pilot.press("down", "r")
        await wait_until(pilot, lambda: isinstance(app.screen, InputScreen), what="rename")
        app.screen.query_one(Input).value = ""
        await type_text(pilot, "renamed fork")
        await pilot.press("enter")
        await wait_until(pilot, lambda: store.get_session(fork.id).title == "renamed fork", what="renamed")
        # export it to Markdown with the CLI's renderer
        await pilot.press("e")
        exported = default_export_path(fork.id)  # the config dir, never the workspace
        await wait_until(pilot, exported.exists, what="export")
        assert "# renamed fork" in exported.read_text() and "old **answer**" in exported.read_text()
        # delete the fork (confirmed)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm 2")
        await pilot.click("#yes")
        await wait_until(pilot, lambda: len(screen.rows) == 1, what="deleted")
        assert [s.id for s in store.list_sessions()] == [old.id]
        # resume the remaining one
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.session_id == old.id, what="resumed")
        await wait_until(
            pilot, lambda: [u.text for u in app.chat_screen.query(UserMessage)] == ["old question"], what="history"
        )


@pytest.mark.slow
async def test_settings_screen_is_generated_from_the_schema_and_saves(workspace, store, script, tmp_path):
    model = script({"text": "unused"})
    config = tmp_path / "user" / "config.toml"
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False, config_path=config)
    async with app.run_test(size=(120, 50), notifications=True) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
        screen = screen_of(app, SettingsScreen)
        for spec in SETTINGS:  # one input per setting, of the type it calls for
            widget = screen.widget_for(spec.key)
            expected = Select if (spec.choices or spec.key == "theme") else Switch if spec.type is bool else Input
            assert isinstance(widget, expected), spec.key
        assert screen.query_one("#section-advanced", Collapsible).collapsed
        assert not screen.query_one("#section-general", Collapsible).collapsed
        steps = field_of(screen, "max_steps", Input)
        steps.value = "many"
        await pilot.press("ctrl+s")
        error = str(screen.query_one("#settings-error", Static).content)
        assert error == "max_steps must be a whole number, not 'many'." and app.screen is screen
        steps.value = "7"
        field_of(screen, "approval", Select).value = "yolo"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: config.exists() and app.settings.max_steps == 7, what="saved")
        saved = tomllib.loads(config.read_text())
        assert saved == {"max_steps": 7, "approval": "yolo"}  # only what changed
        assert app.chat.settings.approval == "yolo"
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings again")
        await pilot.press("escape")
        assert screen_now(app) is app.chat_screen and app.settings.max_steps == 7


@pytest.mark.slow
async def test_model_switch_rebuilds_the_agent_and_warns_before_shrinking(workspace, store, tmp_path):
    big = tmp_path / "big.json"
    big.write_text(
        json.dumps(
            {
                "context_window": 64000,
                "turns": [{"text": "from big", "usage": {"prompt_tokens": 20000}}, {"text": "big again"}],
            }
        )
    )
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"context_window": 16000, "turns": [{"text": "unused"}, {"text": "from small"}]}))
    config = tmp_path / "cfg.toml"
    app = MyrmApp(workspace, scripted_settings(f"scripted/{big}"), store=store, watch_themes=False, config_path=config)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "hello")
        # 20k used; the small model's limit is 16000−4096−320 = 11584: a compaction is coming
        await type_text(pilot, f"/model scripted/{small}")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="shrink warning")
        assert "This will compact about" in screen_of(app, ConfirmScreen).message
        await pilot.click("#no")
        await wait_until(pilot, lambda: "Model unchanged." in notices(app), what="declined")
        assert app.chat.model == f"scripted/{big}" and not config.exists()
        await type_text(pilot, f"/model scripted/{small}")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="shrink warning 2")
        await pilot.click("#yes")
        await wait_until(pilot, lambda: app.chat.model == f"scripted/{small}", what="switched")
        assert not config.exists()  # for this session only (test_model_scope.py)
        await send(pilot, app, "and now?")
        notes = [n.text for n in app.chat_screen.query(Note)]
        assert f"model: scripted/{big} → scripted/{small} (window 64k → 16k)" in notes
        (switch,) = store.events(app.chat.session_id, "model_switch")
        assert switch.data["new"] == f"scripted/{small}"
        assert app.chat_screen.query(UserMessage).last().text == "and now?"


@pytest.mark.slow
async def test_keys_typed_while_the_shrink_warning_is_up_go_to_the_message(workspace, store, tmp_path):
    """The warning answers a /model the user already sent, after a model lookup that can take
    seconds on a loaded box: keys typed on meanwhile land in the dialog, whose buttons ignore
    them. They go to the message instead (docs/tui-keys.md: nothing typed is lost)."""
    big = tmp_path / "big.json"
    turns = [{"text": "from big", "usage": {"prompt_tokens": 20000}}]
    big.write_text(json.dumps({"context_window": 64000, "turns": turns}))
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"context_window": 16000, "turns": [{"text": "unused"}]}))
    app = MyrmApp(
        workspace, scripted_settings(f"scripted/{big}"), store=store, watch_themes=False, config_path=tmp_path / "c"
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, app, "hello")
        await type_text(pilot, f"/model scripted/{small}")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="shrink warning")
        await pilot.press("n", "e", "x", "t", "space", "1", "enter")
        await pilot.pause()
        # The Enter that ends the typing is the typing's (meant to send): it answers nothing.
        assert isinstance(app.screen, ConfirmScreen), "a typed key answered the dialog"
        assert app.chat.model == f"scripted/{big}"
        await pilot.click("#yes")
        await wait_until(pilot, lambda: app.chat.model == f"scripted/{small}", what="switched")
        assert app.chat_screen.prompt.text == "next 1"


@pytest.mark.slow
async def test_a_chat_only_model_is_not_warned_about_a_prompt_it_will_not_carry(workspace, store, tmp_path):
    """A new user's first message (~3k tokens, nearly all system prompt and tool schemas) then
    /model local/smollm2: the embedded model gets a one-line system prompt and no tools, and its
    budget reserves its own output, not the setting's 4,096. The warning once said it would
    compact 1.3k tokens (against a 3.8k limit) and nothing of the sort happened."""
    chat = tmp_path / "tools.json"
    # The provider's count of the prompt (system prompt, tools, ~2k of conversation).
    turn = {"text": "hi", "usage": {"prompt_tokens": 6000}}
    chat.write_text(json.dumps({"context_window": 64000, "turns": [turn]}))
    app = MyrmApp(
        workspace, scripted_settings(f"scripted/{chat}"), store=store, watch_themes=False, config_path=tmp_path / "c"
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.chat_screen.prompt.load_text(" ".join(f"note{i} about the build" for i in range(330)))
        await send(pilot, app, ".")
        reading = app.chat_screen.context.reading
        assert reading.used == 6_000 and reading.fixed_tokens and reading.history_tokens, reading
        share = reading.history_tokens / (reading.fixed_tokens + reading.history_tokens)
        # The conversation's share of the count is over half the prompt limit the setting's
        # output reserve leaves (3.8k), under half the embedded model's own (7.4k); the whole
        # count is over both.
        assert 1_900 < 6_000 * share < 3_700, reading
        await type_text(pilot, "/model local/smollm2")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.model == "local/smollm2", what="switched without a question")
        assert not any(isinstance(s, ConfirmScreen) for s in app.screen_stack)


async def test_quick_model_picker_accepts_a_typed_name(workspace, store, script, tmp_path):
    model = script({"text": "unused"})
    other = write_script(tmp_path, [{"text": "x"}])
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False, config_path=tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        picker = screen_of(app, ModelPicker)
        await type_text(pilot, "gpt-4o")
        await wait_until(
            pilot, lambda: picker.results and "gpt-4o" in picker.results[0].name, what="search", timeout=60
        )
        row = str(picker.query_one(OptionList).get_option_at_index(0).prompt)
        assert "window" in row and "tools" in row and "$" in row
        picker.query_one(Input).value = other
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.model == other, what="switched")
