"""Ctrl+L on a short session says what happened to the prompt, sign and all.

Seen: `compacted 3 messages, −-146 tokens` on a 3-message session, where the summary came out
longer than what it replaced and the prompt grew.
"""

from __future__ import annotations

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.formatting import token_change
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, send, wait_until


def test_token_change_says_the_sign_in_words():
    assert token_change(5000) == "−5,000 tokens"
    assert token_change(-146) == "+146 tokens (the prompt grew)"
    assert token_change(0) == "no tokens saved"
    assert token_change(-95, short=True) == "+95, grew" and token_change(7800, short=True) == "−7,800"


async def test_compacting_a_short_session_never_prints_a_double_sign(workspace, store, script):
    model = script({"text": "Hi."}, {"text": "Fine."}, {"text": "Sure."})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "hello")
        await send(pilot, app, "how are you")
        shown = len(notices(app))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: not screen.compacting and len(notices(app)) > shown, what="compaction")
        await pilot.pause(0.2)
        said = notices(app)[shown:]
        dividers = [d.summary for d in screen.query(CompactionDivider)]
        done = [e.data for e in store.events(app.chat.session_id, "compaction") if e.data.get("state") == "done"]
        assert done and done[-1]["saved"] < 0, "the case seen: the summary is longer than what it replaced"
        grew = -done[-1]["saved"]
        for text in [*said, *dividers]:
            assert "−-" not in text, text
        assert any(f"+{grew:,} tokens (the prompt grew)" in text for text in said), said
        assert any(f"+{grew:,} tokens (the prompt grew)" in text for text in dividers), dividers
