"""The task call's nested block: collapsed by default, the child's work and handover inside."""

from __future__ import annotations

from textual.app import App, ComposeResult

from myrm_tui.agent.subagent.progress import progress_line
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.subagent_block import SubagentBlock
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock, ToolHeader
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send

RESULT = (
    "[subagent done: 2 model calls, 1 tool calls, 900 tokens, 1s · child session abc]\n"
    "handover:\n  completed: ran pytest\n  pending: fix test_b\n  risks: none\n  files: tests/test_b.py\n"
    "result:\ntest_b fails on an off-by-one."
)


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield SubagentBlock("t1", "task", {"prompt": "triage the tests"})


async def test_the_block_is_collapsed_shows_live_steps_when_opened_and_the_handover_apart():
    app = _Host()
    async with app.run_test() as pilot:
        block = app.query_one(SubagentBlock)
        block.start({"prompt": "triage the tests"})
        # A chunk may end mid-line: only whole lines show.
        block.append_live(progress_line("session", "abc") + progress_line("step", "1 (900 prompt tokens)"))
        block.append_live(progress_line("call", "bash command=pytest -q")[:12])
        assert "bash" not in block.progress_text()
        block.append_live(progress_line("call", "bash command=pytest -q")[12:])
        await pilot.pause()
        assert not block.expanded and block.query_one(".steps").styles.display == "none"
        assert "▸ bash command=pytest -q" in block.progress_text()
        assert "1 call" in block.header_text()
        await pilot.click(ToolHeader)
        assert block.expanded
        assert block.query_one(".steps").styles.display == "block"
        block.finish("ok", RESULT, 1.0)
        await pilot.pause()
        assert block.handover_text.startswith("[subagent done") and "pending: fix test_b" in block.handover_text
        assert "result:" not in block.handover_text
        assert block.query_one(".handover").styles.display == "block"
        await pilot.click(ToolHeader)
        assert not block.expanded and block.query_one(".handover").styles.display == "none"


async def test_a_task_call_in_a_live_turn_gets_the_nested_block(workspace, store, script):
    # One script plays both agents (the scripted model answers by assistant-message count): the
    # parent delegates at turn 0 and answers at turn 1; the child, which has no task tool, gets
    # an error for its own "task" call at turn 0 and writes the handover at turn 1.
    answer = "test_b fails.\n<handover>\ncompleted:\n- ran it\npending: none\nrisks: none\nfiles: t.py\n</handover>"
    model = script(
        {"tool_calls": [{"id": "t1", "name": "task", "arguments": {"prompt": "triage the tests"}}]},
        {"text": answer},
    )
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "why do the tests fail?")
        [block] = [b for b in app.chat_screen.query(ToolBlock) if b.call_id == "t1"]
        assert isinstance(block, SubagentBlock)
        assert not block.expanded  # collapsed by default
        assert block.status == "ok" and "completed: ran it" in block.handover_text
        assert "child session" in block.progress_text() and "▸ task" in block.progress_text()
