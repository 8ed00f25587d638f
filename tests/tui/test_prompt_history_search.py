"""Prompt history across the workspace's sessions, and the search over it (Ctrl+S in the prompt)."""

from __future__ import annotations

from textual.widgets import Input

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.prompt.prompt_history import PromptHistory
from myrm_tui.tui.prompt.user_prompts import workspace_prompts
from myrm_tui.tui.screens.prompt_search import PromptSearchScreen, prompt_row
from tests.tui.tui_pilot_helpers import SIZE, screen_of, scripted_settings, type_text, wait_until


def test_older_prompts_go_before_and_browsing_keeps_its_place():
    history = PromptHistory(["mine 1", "mine 2"])
    assert history.previous("draft") == "mine 2"
    history.add_older(["old 1", "old 2"])
    assert history.previous("ignored") == "mine 1"
    assert history.previous("ignored") == "old 2"
    assert history.next() == "mine 1" and history.next() == "mine 2" and history.next() == "draft"


def test_search_is_newest_first_each_text_once_every_word():
    history = PromptHistory(["run the tests", "deploy staging", "Run the TESTS again", "run the tests"])
    assert history.search("tests run", 10) == ["run the tests", "Run the TESTS again"]
    assert history.search("", 2) == ["run the tests", "Run the TESTS again"]
    assert history.search("nothing", 10) == []


def test_a_picked_entry_browses_on_and_gives_the_draft_back():
    history = PromptHistory(["a", "b", "c"])
    assert history.jump_to("b", "my draft")
    assert history.next() == "c" and history.next() == "my draft" and history.next() is None
    assert not history.jump_to("zzz", "x")


def test_workspace_prompts_cross_sessions_in_order_without_plumbing(store):
    first = store.create_session("m", "first")
    store.append_message(first.id, {"role": "user", "content": "one"}, 1)
    store.append_message(first.id, {"role": "assistant", "content": "ok"}, 1)
    second = store.create_session("m", "second")
    store.append_message(second.id, {"role": "user", "content": "two"}, 1)
    store.append_message(second.id, {"role": "user", "content": "synthetic", "myrm_synthetic": True}, 1)
    kept = store.append_message(first.id, {"role": "user", "content": "three"}, 1)
    fork = store.fork(first.id, title="fork")  # shares one, three: counted once
    store.append_message(fork.id, {"role": "user", "content": "four"}, 1)
    assert workspace_prompts(store) == ["one", "two", "three", "four"]
    assert workspace_prompts(store, exclude={kept.id}) == ["one", "two", "four"]


def test_a_multi_line_prompt_is_one_row():
    assert prompt_row("first line\n\n  second line\n") == "first line ⏎ second line"


def _old_session(store, model: str) -> None:
    old = store.create_session(model, "yesterday")
    for text in ("deploy the staging server", "fix the flaky\nparser test"):
        store.append_message(old.id, {"role": "user", "content": text}, 3)
        store.append_message(old.id, {"role": "assistant", "content": "done"}, 1)


async def test_a_new_session_recalls_and_searches_other_sessions_prompts(workspace, store, script):
    model = script({"text": "unused"})
    _old_session(store, model)
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.chat_screen.prompt
        assert app.chat.session_id is None  # a fresh session
        await wait_until(pilot, lambda: len(prompt.prompt_history.entries) == 2, what="workspace history")
        await type_text(pilot, "half typed")
        await pilot.press("up")  # an earlier session's newest prompt
        assert prompt.text == "fix the flaky\nparser test"
        await pilot.press("down", "down")  # back past the newest: the draft
        assert prompt.text == "half typed"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptSearchScreen), what="search")
        search = screen_of(app, PromptSearchScreen)
        assert search.matches == []  # the one-line draft is the starting query: nothing matches it
        search.query_one("#prompt-search-query", Input).value = ""
        await type_text(pilot, "staging")
        await wait_until(pilot, lambda: search.matches == ["deploy the staging server"], what="match")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is app.chat_screen, what="closed")
        assert prompt.text == "deploy the staging server" and prompt.has_focus
        await pilot.press("down")  # on to the newer prompt…
        assert prompt.text == "fix the flaky\nparser test"
        await pilot.press("end", "down")  # …(from its last line) and back to the replaced draft
        assert prompt.text == "half typed"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptSearchScreen), what="search 2")
        await pilot.press("escape")  # cancel: the draft is untouched
        await wait_until(pilot, lambda: app.screen is app.chat_screen, what="cancelled")
        assert prompt.text == "half typed"


def test_prompt_search_snapshot(snap_compare, workspace, store):
    """The search dialog over another session's prompts: newest first, one line each (a
    multi-line prompt joined with ⏎, a long one cut with an ellipsis)."""
    from tests.tui.snapshot_helpers import SNAP_SIZE, make_app, settle

    old = store.create_session("openai/gpt-4o", "yesterday")
    for text in (
        "fix the parser test",
        "why does the parser drop the last line?\nsee test_parse",
        (
            "rewrite the parser so that it streams input instead of reading the whole file, keeps "
            "line numbers for errors, and never allocates more than one line at a time"
        ),
        "deploy staging",
    ):
        store.append_message(old.id, {"role": "user", "content": text}, 3)
        store.append_message(old.id, {"role": "assistant", "content": "ok"}, 1)
    app = make_app(workspace, store)

    async def open_search(pilot):
        await settle(pilot)
        prompt = pilot.app.chat_screen.prompt
        await wait_until(pilot, lambda: len(prompt.prompt_history.entries) == 4, what="history")
        await type_text(pilot, "parser")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptSearchScreen) and len(pilot.app.screen.matches) == 3,
            what="matches",
        )
        pilot.app.screen.query_one("#prompt-search-query").cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=open_search)
