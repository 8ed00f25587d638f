"""Ctrl+L on a short session says what happened to the prompt, sign and all.

Seen: `compacted 3 messages, −-146 tokens` on a 3-message session, where the summary came out
longer than what it replaced and the prompt grew. Since, the command refuses a span that short
(`EngineConfig.min_manual_compact_tokens`) and says so; a compaction that still grows the
prompt (a longer span whose summary came out longer) is worded the same way.
"""

from __future__ import annotations

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.formatting import token_change
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from tests.agent.agent_helpers import compact_any_span
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, send, wait_until


def test_token_change_says_the_sign_in_words():
    assert token_change(5000) == "−5,000 tokens"
    assert token_change(-146) == "+146 tokens (the prompt grew)"
    assert token_change(0) == "no tokens saved"
    assert token_change(-95, short=True) == "+95, grew" and token_change(7800, short=True) == "−7,800"


async def _ctrl_l_after_two_short_messages(pilot, app, *, any_span: bool) -> list[str]:
    """Two short exchanges, then Ctrl+L; returns the notices it gave. `any_span`: the
    command's least span lowered (`compact_any_span`), so it compacts whatever the size."""
    screen = app.chat_screen
    await send(pilot, app, "hello")
    await send(pilot, app, "how are you")
    if any_span:
        compact_any_span(app.chat.agent(""))
    shown = len(notices(app))
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: not screen.compacting and len(notices(app)) > shown, what="compaction")
    await pilot.pause(0.2)
    return notices(app)[shown:]


async def test_compacting_a_short_session_never_prints_a_double_sign(workspace, store, script):
    model = script({"text": "Hi."}, {"text": "Fine."}, {"text": "Sure."})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        said = await _ctrl_l_after_two_short_messages(pilot, app, any_span=True)
        dividers = [d.summary for d in app.chat_screen.query(CompactionDivider)]
        done = [e.data for e in store.events(app.chat.session_id, "compaction") if e.data.get("state") == "done"]
        assert done and done[-1]["saved"] < 0, "the case seen: the summary is longer than what it replaced"
        grew = -done[-1]["saved"]
        for text in [*said, *dividers]:
            assert "−-" not in text, text
        assert any(f"+{grew:,} tokens (the prompt grew)" in text for text in said), said
        assert any(f"+{grew:,} tokens (the prompt grew)" in text for text in dividers), dividers


async def test_ctrl_l_on_a_short_session_changes_nothing_and_says_why(workspace, store, script):
    """A new user's Ctrl+L after two short messages: a summary would be longer than what it
    replaces, so nothing is written and the notice says why (not "compacted … the prompt grew")."""
    model = script({"text": "Hi."}, {"text": "Fine."}, {"text": "Sure."})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        said = await _ctrl_l_after_two_short_messages(pilot, app, any_span=False)
        assert any(text.startswith("Nothing worth compacting yet") for text in said), said
        assert not store.events(app.chat.session_id, "compaction")
        assert not app.chat_screen.query(CompactionDivider)
