"""A confirm dialog that answers something the user asked for while they typed on: their keys go
to the message (`type_ahead`), an Enter that ends that typing answers nothing, and a key the
dialog binds (a keymap entry too) stays the dialog's."""

from __future__ import annotations

from textual.app import App
from textual.events import Paste

from myrm_tui.tui.screens.dialogs import ConfirmScreen


class _Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.typed: list[str] = []
        self.answers: list[bool | None] = []

    def ask(self) -> None:
        self.push_screen(
            ConfirmScreen("Switch?", "It will compact.", "Switch", type_ahead=self.typed.append), self.answers.append
        )


async def test_typing_goes_to_the_message_and_its_enter_answers_nothing():
    app = _Host()
    async with app.run_test() as pilot:
        app.ask()
        await pilot.pause()
        await pilot.press("h", "i", "space", "enter")
        await pilot.pause()
        assert "".join(app.typed) == "hi " and app.answers == [] and isinstance(app.screen, ConfirmScreen)
        app.screen.post_message(Paste("pasted text"))
        await pilot.pause()
        assert app.typed[-1] == "pasted text" and isinstance(app.screen, ConfirmScreen)
        await pilot.press("tab", "shift+tab", "enter")  # back on Switch, chosen on purpose
        await pilot.pause()
        assert app.answers == [True]


async def test_a_key_the_keymap_gives_the_dialog_stays_the_dialogs():
    app = _Host()
    async with app.run_test() as pilot:
        app.set_keymap({"dialog.cancel": "escape,n"})
        app.ask()
        await pilot.pause()
        await pilot.press("o", "n")
        await pilot.pause()
        assert app.typed == ["o"] and app.answers == [False]
