"""The compaction panel on an 80x24 terminal takes the transcript's place while shown.

Seen: beside a 50-column panel the chat was squeezed to ~28 columns. Narrow, the panel now shows
instead of the transcript (Ctrl+B again brings the conversation back); wide, it sits beside it.
The prompt stays in view either way.
"""

from __future__ import annotations

import pytest

from myrm_tui.tui.app import MyrmApp
from tests.tui.tui_pilot_helpers import scripted_settings, send, wait_until


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_panel_never_squeezes_the_chat(workspace, store, script, size):
    app = MyrmApp(workspace, scripted_settings(script({"text": "A reply."})), store=store, watch_themes=False)
    async with app.run_test(size=size) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "hello")
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: screen.panel.display, what="panel")
        await pilot.pause(0.1)
        width = size[0]
        transcript, panel, prompt = screen.transcript, screen.panel, screen.prompt
        assert prompt.region.width >= width - 2, "the prompt keeps the whole width"
        if width < 100:
            assert transcript.region.width == 0, "the panel is shown instead of the transcript"
            assert panel.region.width == width
        else:
            assert transcript.region.width >= width - panel.region.width - 2 >= 60
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: not screen.panel.display, what="panel hidden")
        await pilot.pause(0.1)
        assert transcript.region.width >= width - 2, "the conversation is back, whole"
