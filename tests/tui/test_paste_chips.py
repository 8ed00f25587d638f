"""Big pastes collapse into a `[pasted N lines]` chip in the prompt; the full text is what is sent,
and the chip expands on demand (Ctrl+T)."""

from __future__ import annotations

from textual import events

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import PASTE_CHIP_LINES
from myrm_tui.tui.prompt.paste_chips import PasteChips, is_big
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, type_text, wait_until

BIG = "\n".join(f"log line {n}" for n in range(312))


def test_labels_are_unique_and_broken_labels_stay_text():
    chips = PasteChips()
    first, second = chips.add(BIG), chips.add(BIG)
    assert (first, second) == ("[pasted 312 lines]", "[pasted 312 lines #2]")
    assert chips.expand(f"see {second} and {first}") == f"see {BIG} and {BIG}"
    assert chips.expand("see [pasted 312 line") == "see [pasted 312 line"
    chips.retain(f"only {second}")
    assert list(chips.pastes) == [second]
    assert not is_big("\n".join(["x"] * PASTE_CHIP_LINES)) and is_big("\n".join(["x"] * (PASTE_CHIP_LINES + 1)))


async def test_a_big_paste_shows_as_a_chip_and_sends_in_full(workspace, store, script):
    model = script({"text": "got it"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.chat_screen.prompt
        await type_text(pilot, "explain ")
        app.post_message(events.Paste(BIG))
        await wait_until(pilot, lambda: "[pasted 312 lines]" in prompt.text, what="chip")
        assert prompt.text == "explain [pasted 312 lines]" and prompt.document.line_count == 1
        app.post_message(events.Paste("short paste"))  # small pastes go in as they are
        await wait_until(pilot, lambda: prompt.text.endswith("short paste"), what="small paste")
        await send(pilot, app, "")
        (user,) = [m for m in store.messages(app.chat.session_id) if m.role == "user"]
        assert user.message["content"] == f"explain {BIG}short paste"
        assert prompt.text == "" and not prompt.chips
        assert app.chat_screen.query(UserMessage).last().text.startswith("explain log line 0")


async def test_the_chip_expands_on_demand(workspace, store, script):
    app = MyrmApp(workspace, scripted_settings(script({"text": "unused"})), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.chat_screen.prompt
        app.post_message(events.Paste(BIG))
        await wait_until(pilot, lambda: prompt.text == "[pasted 312 lines]", what="chip")
        await pilot.press("ctrl+t")
        assert prompt.text == BIG and not prompt.chips
