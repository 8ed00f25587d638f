"""While a reply streams, each frame lays the screen out at most once, and the status line's clock
is a repaint: a layout is a reflow of every widget on the screen, the largest share of a frame.

Counts, not timings (widgets/one_pass_layout.py says why a grown widget used to cost a second
layout; widgets/status_bar.py why the status text needs none).
"""

from __future__ import annotations

import time

from textual._compositor import Compositor

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.live_reply import LiveReply
from myrm_tui.tui.widgets.status_bar import StatusBar
from tests.tui.tui_pilot_helpers import SIZE, WAIT_TIMEOUT_S, scripted_settings, type_text, wait_until

# Prose lines that each add a row: the live reply grows (so needs a layout) in nearly every frame.
REPLY = "".join(f"Line {n} of the answer, long enough to be a row of its own.\n\n" for n in range(120))


def count_reflows(monkeypatch) -> list[int]:
    calls = [0]
    reflow = Compositor.reflow

    def counted(self, parent, size):
        calls[0] += 1
        return reflow(self, parent, size)

    monkeypatch.setattr(Compositor, "reflow", counted)
    return calls


async def settle_layouts(pilot, reflows: list[int], quiet_s: float = 0.3) -> None:
    """Return once no layout has run for `quiet_s` (what the app does after its start is over)."""
    seen, quiet_since = reflows[0], time.monotonic()
    deadline = quiet_since + WAIT_TIMEOUT_S
    while time.monotonic() - quiet_since < quiet_s:
        if time.monotonic() > deadline:
            raise AssertionError(f"the screen kept laying out ({reflows[0]} layouts)")
        await pilot.pause(0.02)
        if reflows[0] != seen:
            seen, quiet_since = reflows[0], time.monotonic()


async def test_a_streaming_frame_lays_the_screen_out_once(workspace, store, script, monkeypatch):
    reflows = count_reflows(monkeypatch)
    # ~4 s of stream: dozens of frames on a quiet box, still several on a loaded one
    model = script({"text": REPLY, "chunk_size": 40, "delay_ms": 25})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "explain")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        live = reply.markdown
        assert isinstance(live, LiveReply)
        await wait_until(pilot, lambda: live.frames >= 3, what="the first frames")
        start_frames, start_reflows = live.frames, reflows[0]
        while reply.streaming and reply.markdown is live:
            await pilot.pause(0.02)
        frames, layouts = live.frames - start_frames, reflows[0] - start_reflows
        await wait_until(pilot, lambda: not screen.turn_running, what="turn end")
        transcript = screen.query_one("#transcript")
        assert transcript.scroll_y == transcript.max_scroll_y, "the view followed the reply to its end"

    assert frames >= 6, "the reply streamed over several frames"
    # one per frame that grew the reply, plus a few for the rest of the turn (status, figures);
    # a second layout after each would be twice the frames
    assert layouts <= frames * 1.25 + 3, f"{layouts} layouts for {frames} frames"


async def test_the_status_clock_repaints_without_a_layout(workspace, store, script, monkeypatch):
    model = script({"text": "ok"})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        status = app.chat_screen.query_one(StatusBar)
        reflows = count_reflows(monkeypatch)
        # the warm-up's end lays out the welcome and the ring (a slow box's takes longer than a
        # fixed pause): count from the first quiet stretch after it
        await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="warm-up")
        await settle_layouts(pilot, reflows)
        reflows[0] = 0
        for second in range(5):
            status.set(state=f"streaming {second}.0 s · 812 tok/s")
            await pilot.pause(0.05)
        assert "streaming 4.0 s" in status.plain()
        assert reflows[0] == 0, f"{reflows[0]} layouts for 5 status updates"
