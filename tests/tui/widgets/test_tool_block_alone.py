"""One tool block alone, in a tiny host app, driven through its lifecycle calls and its keys.

tests/tui/test_toggle_actions.py checks that the fold keys flip `expanded`; here the question
is what the user sees: the output only while unfolded, a failed call open by itself, the live
tail replaced by the stored result, and never a control sequence from the tool's output.
"""

from __future__ import annotations

from textual.app import App, ComposeResult

from myrm_tui.tui.constants import TOOL_OUTPUT_DISPLAY_CHARS
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock, ToolHeader
from tests.tui.tui_pilot_helpers import notices, screen_text, wait_until

SIZE = (100, 50)
HOSTILE = "ok\x1b]52;c;cHduZWQ=\x07 \x1b[2J\x9b31m \u202edone"  # clipboard write, clear screen, CSI, bidi


class HostApp(App[None]):
    def __init__(self, arguments: dict | None = None) -> None:
        super().__init__()
        self.arguments = arguments if arguments is not None else {"command": "make test"}
        self.opened: list[ToolBlock.OpenOutput] = []

    def compose(self) -> ComposeResult:
        yield ToolBlock("c1", "bash", self.arguments)

    @property
    def block(self) -> ToolBlock:
        return self.query_one(ToolBlock)

    def on_tool_block_open_output(self, message: ToolBlock.OpenOutput) -> None:
        self.opened.append(message)


def assert_no_control_sequences(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text and "\u202e" not in text


async def test_the_header_tells_the_call_and_the_output_shows_only_when_unfolded():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        assert app.block.header_text() == "· bash make test"
        app.block.start()
        app.block.finish("ok", "collected 12 items\n12 passed", 1.5)
        await pilot.pause()
        assert "12 passed" not in screen_text(app) and not app.block.expanded  # ok calls stay folded
        assert "bash" in screen_text(app) and "make test" in screen_text(app)
        app.query_one(ToolHeader).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "12 passed" in screen_text(app), what="the output shown")
        await pilot.press("space")
        await wait_until(pilot, lambda: "12 passed" not in screen_text(app), what="the output hidden")


async def test_a_failed_call_opens_itself_and_names_its_status():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.block.start()
        app.block.finish("error", "exit 2: no rule to make target 'test'", 0.2)
        await pilot.pause()
        assert app.block.expanded and app.block.has_class("-error")
        assert app.block.header_text().endswith("error")
        assert "no rule to make target" in screen_text(app)


async def test_long_output_is_cut_and_says_how_much_more_there_is():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.block.finish("ok", "x" * (TOOL_OUTPUT_DISPLAY_CHARS + 1234), 0.1)
        app.block.expanded = True
        await pilot.pause()
        assert "… 1,234 more characters" in screen_text(app)


async def test_the_live_tail_shows_while_running_and_the_stored_result_replaces_it():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.block.start()
        app.block.append_live("".join(f"line {n}\n" for n in range(1, 41)))
        await pilot.pause()
        text = screen_text(app)
        assert "line 40" in text and "line 20" not in text  # only the tail of a long run
        app.block.finish("ok", "all done", 2.0)
        await pilot.pause()
        assert "line 40" not in screen_text(app) and app.block.header_text() == "✓ bash make test (2.0 s)"


async def test_control_sequences_from_the_tool_never_reach_the_screen():
    app = HostApp({"command": f"cat notes {HOSTILE}"})
    async with app.run_test(size=SIZE) as pilot:
        app.block.start()
        app.block.append_live(HOSTILE)
        await pilot.pause()
        live = screen_text(app)
        assert "\\x1b]52;c;" in live
        assert_no_control_sequences(live)
        app.block.finish("error", f"{HOSTILE}\nexit 1", 0.3)
        await pilot.pause()
        shown = screen_text(app)
        assert app.block.expanded and "\\x1b]52;c;" in shown and "\\u202e" in shown
        assert_no_control_sequences(shown)
        assert_no_control_sequences(app.block.header_text())


async def test_o_asks_for_the_full_output_only_once_the_call_finished():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(ToolHeader).focus()
        await pilot.press("o")
        await pilot.pause()
        assert app.opened == [] and any("No output yet" in n for n in notices(app))
        app.block.finish("ok", "the whole output", 0.4)
        await pilot.press("o")
        await wait_until(pilot, lambda: app.opened, what="the open request")
        (request,) = app.opened
        assert request.title == "bash make test" and request.stored == "the whole output"
        assert request.vault is None and request.handle is None  # no store in this host
