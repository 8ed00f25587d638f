"""Tool blocks: the real output's size in the preview, and the full output in a scrollable viewer."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea

from myrm_tui.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import TOOL_OUTPUT_DISPLAY_CHARS
from myrm_tui.tui.screens.tool_output import ToolOutputScreen, load_output
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

LINES = 20_000
# `seq 1 20000`: every number and its newline, far above tool_output_cap (spilled to the vault)
REAL_CHARS = sum(len(str(i)) + 1 for i in range(1, LINES + 1))


def _seq_then_done(call_id: str = "c1") -> tuple[dict, dict]:
    return (
        {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": f"seq 1 {LINES}"}}]},
        {"text": "counted"},
    )


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def _open_viewer(pilot, app, block: ToolBlock, key: str = "o") -> ToolOutputScreen:
    block.query_one(".header").focus()
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, ToolOutputScreen), what="viewer")
    viewer = app.screen
    assert isinstance(viewer, ToolOutputScreen)
    await wait_until(pilot, lambda: viewer.loaded is not None, what="output loaded")
    return viewer


def _output_text(block: ToolBlock) -> str:
    return str(block.query_one(".output").render())


@pytest.mark.slow
async def test_big_output_counts_the_real_output_and_opens_whole_in_the_viewer(workspace, store, script):
    model = script(*_seq_then_done())
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "count")
        await wait_until(
            pilot, lambda: not app.chat_screen.turn_running and app.chat_screen.query(ToolBlock), what="turn end"
        )
        block = app.chat_screen.query_one(ToolBlock)
        assert block.status == "ok" and block.vault_handle
        preview = block.preview
        # the stored result is an excerpt of ~30k chars; the count is of the 108,894 real ones
        assert preview is not None and preview.total_chars == REAL_CHARS
        shown = min(len(block.content or ""), TOOL_OUTPUT_DISPLAY_CHARS)
        assert f"… {REAL_CHARS - shown:,} more characters" in _output_text(block)
        assert f"full output: {block.vault_handle} · o opens it" in _output_text(block)

        viewer = await _open_viewer(pilot, app, block)
        area = viewer.query_one(TextArea)
        assert viewer.loaded is not None and viewer.loaded.total_chars == REAL_CHARS
        assert area.document.line_count == LINES + 1  # every line, not the excerpt
        assert area.document.get_line(LINES - 1) == str(LINES)
        assert app.screen.focused is area  # scrollable with the keys at once
        await pilot.press("end")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolOutputScreen), what="closed")
        session_id = app.chat.session_id

    # a reopened session's block finds the handle in the stored result and opens the same output
    reopened = MyrmApp(workspace, scripted_settings(model), store=store, session_id=session_id)
    async with reopened.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: reopened.chat_screen.query(ToolBlock), what="history")
        block = reopened.chat_screen.query_one(ToolBlock)
        assert block.preview is not None and block.preview.total_chars == REAL_CHARS
        viewer = await _open_viewer(pilot, reopened, block)
        assert viewer.query_one(TextArea).document.line_count == LINES + 1


async def test_a_cut_preview_says_how_much_more_and_the_remapped_key_opens_it(workspace, store, script):
    lines = 2_000  # 8,893 characters: more than the block shows, less than tool_output_cap (not spilled)
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": f"seq 1 {lines}"}}]}, {"text": "ok"}
    )
    settings = Settings(keymap={"tool.open_output": "v"}).with_values(model=model, approval="yolo")
    app = MyrmApp(workspace, settings, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "count")
        await wait_until(
            pilot, lambda: not app.chat_screen.turn_running and app.chat_screen.query(ToolBlock), what="turn end"
        )
        block = app.chat_screen.query_one(ToolBlock)
        assert block.vault_handle is None
        more = len(block.content or "") - TOOL_OUTPUT_DISPLAY_CHARS
        assert f"… {more:,} more characters · v opens it" in _output_text(block)
        viewer = await _open_viewer(pilot, app, block, key="v")
        # nothing was spilled: the viewer shows the whole stored result
        area = viewer.query_one(TextArea)
        assert area.document.get_line(lines - 1) == str(lines)
        assert viewer.loaded is not None and "the stored result" in viewer.loaded.note


def test_viewer_text_is_sanitised_and_capped(store):
    handle = store.vault.put("title\x1b]0;pwned\x07 clipboard\x1b]52;c;SGk=\x07\n" + "x" * 1_000)
    loaded = load_output(store.vault, handle, "excerpt")
    assert "\x1b" not in loaded.text and "\x07" not in loaded.text
    assert "\\x1b]52;c;SGk=" in loaded.text
    capped = load_output(store.vault, handle, "excerpt", limit=100)
    assert len(capped.text) <= 100 + 20  # escapes widen a few characters, never the cap's source slice
    assert capped.note.startswith(f"showing the first 100 of {loaded.total_chars:,} characters of {handle}")


def test_an_unreadable_handle_falls_back_to_the_stored_excerpt(store):
    loaded = load_output(store.vault, "vault://0123456789ab", "the excerpt")
    assert loaded.text == "the excerpt" and loaded.note.startswith("could not read vault://0123456789ab")
