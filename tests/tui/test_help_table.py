"""F1 at 120 columns: the key table's descriptions read as sentences, not a word per line.

Seen: with the ids in auto-sized columns, the row with three ids made the id column the widest
and every description wrapped one word per line.
"""

from __future__ import annotations

from myrm_tui.tui.app import MyrmApp
from tests.tui.tui_pilot_helpers import screen_text, scripted_settings, wait_until


async def test_f1_descriptions_keep_their_words_together_at_120_columns(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.ready.is_set(), what="warm-up")
        await pilot.press("f1")
        await wait_until(pilot, lambda: app.screen.id == "help-screen", what="F1")
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "Retry: regenerate the last answer" in text, text
        assert "While editing: the message before" in text, text
        rows = [line for line in text.splitlines() if "│ F" in line or "│ Alt+" in line or "│ Ctrl+" in line]
        assert rows, text
        for row in rows:
            cells = [cell.strip() for cell in row.split("│") if cell.strip()]
            assert len(cells) >= 3 and cells[2], f"each row shows its id: {row!r}"
