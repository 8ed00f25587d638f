"""Load earlier keeps the user's view on the turn they were reading. The CI machine caught a race:
when something below that turn grew in the same layout as the batch (a reply whose lines arrived
late), the view was moved by the whole growth and the user lost their place. These tests make that
growth land in the batch's own layout on purpose."""

from __future__ import annotations

from textual.widgets import Static

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import LOAD_EARLIER_TURNS, TURN_WINDOW
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.test_long_sessions import seed_turns
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, wait_until

GROWTH_ROWS = 45  # taller than a page (SIZE is 36 rows high), so any leak of it into the scroll shows


async def settled(pilot, read, what: str):
    """The value once two reads a frame apart agree: a region read mid-layout is not an answer."""
    previous = object()

    def same() -> bool:
        nonlocal previous
        value = read()
        ok, previous = value == previous, value
        return ok

    await wait_until(pilot, same, what=what)
    return previous


async def test_growth_below_in_the_batch_layout_does_not_move_the_view(workspace, store, script):
    model = script({"text": "unused"})
    sid = seed_turns(store, model, TURN_WINDOW + LOAD_EARLIER_TURNS)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        transcript = screen.transcript
        await wait_until(pilot, lambda: transcript.hidden_turns > 0, what="windowed history")
        transcript.scroll_to(y=5, animate=False)
        anchor = screen.query(UserMessage)[0]
        y_before = await settled(pilot, lambda: (anchor.region.y, transcript.scroll_y), what="view at rest")

        mount_all = transcript.mount_all

        def grow_below_then_mount(widgets, **where):
            # same batch_update as the batch: one layout sees both the batch above and the growth below
            transcript.mount(Static("\n".join(["late line"] * GROWTH_ROWS)))
            return mount_all(widgets, **where)

        transcript.mount_all = grow_below_then_mount  # type: ignore[method-assign]  # growth in the same batch
        transcript.load_earlier()
        await wait_until(
            pilot, lambda: len(screen.query(UserMessage)) == TURN_WINDOW + LOAD_EARLIER_TURNS, what="batch mounted"
        )
        after = await settled(pilot, lambda: (anchor.region.y, transcript.scroll_y), what="view at rest")
        assert after[0] == y_before[0]  # the turn being read did not move on screen
        assert after[1] > y_before[1]  # the batch above was scrolled past, not shown
