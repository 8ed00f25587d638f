"""The sessions screen's search (title, first message, model) and its one-line rows."""

from __future__ import annotations

from textual.widgets import Input, OptionList

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.dialogs import InputScreen
from myrm_tui.tui.screens.sessions import SessionsScreen
from myrm_tui.tui.session_search import matches, search_fields
from tests.tui.tui_pilot_helpers import scripted_settings, type_text, wait_until


def test_every_word_must_match_somewhere_ignoring_case():
    fields = search_fields("Fix the parser", "why does the tokenizer drop tabs?", "gpt-4o", "1a2b3c4d")
    assert matches("fix GPT", fields) and matches("tokenizer", fields) and matches("1a2b", fields)
    assert matches("", fields)
    assert not matches("parser claude", fields)


def _seed(store, model: str) -> dict[str, str]:
    ids = {}
    for title, first, session_model in (
        ("Refactor the loader", "split loader.py into smaller modules please", "anthropic/claude-sonnet-4"),
        (
            "A very long title about the release checklist that goes on and on",
            "what is left before 2.0?",
            "openai/gpt-4o",
        ),
        ("Untitled scratch", "why does the tokenizer drop tabs", model),
    ):
        session = store.create_session(session_model, title)
        store.append_message(session.id, {"role": "user", "content": first}, 3)
        store.append_message(session.id, {"role": "assistant", "content": "ok"}, 1)
        ids[title] = session.id
    return ids


async def _open(pilot, app) -> SessionsScreen:
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.rows, what="list")
    return app.screen


def _titles(screen: SessionsScreen) -> list[str]:
    return [row.session.title for row in screen.rows]


async def test_search_filters_by_title_first_message_and_model(workspace, store, script):
    model = script({"text": "unused"})
    ids = _seed(store, model)
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=(110, 30)) as pilot:
        screen = await _open(pilot, app)
        assert len(screen.rows) == 3
        await pilot.press("slash")
        search = screen.query_one("#session-search", Input)
        assert search.has_focus
        await type_text(pilot, "tokenizer")  # only in the first message
        await wait_until(pilot, lambda: _titles(screen) == ["Untitled scratch"], what="first-message match")
        search.value = ""
        await type_text(pilot, "gpt-4o")  # only the model
        await wait_until(pilot, lambda: len(screen.rows) == 1, what="model match")
        assert screen.rows[0].session.model == "openai/gpt-4o"
        search.value = ""
        await type_text(pilot, "refactor")  # the title; "r" typed here is text, not rename
        await wait_until(pilot, lambda: _titles(screen) == ["Refactor the loader"], what="title match")
        assert not isinstance(app.screen, InputScreen) and search.value == "refactor"
        await type_text(pilot, " nothing")
        await wait_until(pilot, lambda: not screen.rows, what="no match")
        assert "no session matches" in str(screen.query_one(OptionList).get_option_at_index(0).prompt)
        await pilot.press("escape")  # clears the search, stays open
        await wait_until(pilot, lambda: len(screen.rows) == 3, what="cleared")
        assert app.screen is screen
        await type_text(pilot, "loader")
        await wait_until(pilot, lambda: len(screen.rows) == 1, what="loader")
        await pilot.press("enter")  # resumes the match
        await wait_until(pilot, lambda: app.chat.session_id == ids["Refactor the loader"], what="resumed")


async def test_rows_stay_one_line_in_a_narrow_terminal(workspace, store, script):
    model = script({"text": "unused"})
    _seed(store, model)
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=(60, 30)) as pilot:
        screen = await _open(pilot, app)
        listing = screen.query_one(OptionList)
        await pilot.pause()
        text = str(listing.get_option_at_index(1).prompt)
        assert len(text) > listing.scrollable_content_region.width  # would wrap without nowrap
        assert listing.virtual_size.height == listing.option_count == 3
        line = "".join(segment.text for segment in listing.render_line(1))
        assert line.rstrip().endswith("…")
