"""The fold/unfold keys of tool blocks and context notes, and Textual's own `toggle(attribute)`
action on the same widgets: the widgets once overrode DOMNode.action_toggle with a signature of
their own (found by mypy), which broke any `toggle('…')` action aimed at them."""

from __future__ import annotations

from textual.app import App, ComposeResult

from myrm_tui.tui.widgets.blocks.context_note_block import ContextNoteBlock, ContextNoteTitle
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock, ToolHeader


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolBlock("c1", "bash", {"command": "ls"})
        yield ContextNoteBlock("Compacted 3 messages", "the summary body")


async def test_enter_and_space_fold_and_unfold_a_tool_block():
    app = _Host()
    async with app.run_test() as pilot:
        block = app.query_one(ToolBlock)
        app.query_one(ToolHeader).focus()
        await pilot.press("enter")
        assert block.expanded and block.has_class("-expanded")
        await pilot.press("space")
        assert not block.expanded and not block.has_class("-expanded")


async def test_a_click_on_the_tool_header_unfolds_the_output():
    app = _Host()
    async with app.run_test() as pilot:
        await pilot.click(ToolHeader)
        assert app.query_one(ToolBlock).expanded


async def test_enter_unfolds_a_context_note_and_shows_its_summary():
    app = _Host()
    async with app.run_test() as pilot:
        note = app.query_one(ContextNoteBlock)
        app.query_one(ContextNoteTitle).focus()
        await pilot.press("enter")
        assert note.expanded and "the summary body" in note.plain()
        await pilot.press("enter")
        assert not note.expanded and "the summary body" not in note.plain()


async def test_textuals_toggle_attribute_action_still_works_on_both_headers():
    app = _Host()
    async with app.run_test():
        header = app.query_one(ToolHeader)
        title = app.query_one(ContextNoteTitle)
        assert await app.run_action("toggle('disabled')", header)
        assert await app.run_action("toggle('disabled')", title)
        assert header.disabled and title.disabled
        # and it toggled the attribute only: the blocks stayed folded
        assert not app.query_one(ToolBlock).expanded and not app.query_one(ContextNoteBlock).expanded
