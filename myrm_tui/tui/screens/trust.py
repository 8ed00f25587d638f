"""The workspace trust dialog, shown over the chat before the first message can be sent.

Why a dialog and not a warning line: the workspace's `.myrm/config.toml` came with the
repository and asks for settings that decide what runs or where the prompts and API keys go
(an endpoint, a model). Until the user decides they are ignored; the dialog lists exactly those
values, escaped, so a hostile value cannot hide in it. "Ignore them" is highlighted and Esc
picks it: the safe answer is the one a hurried Enter gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.settings.settings import Settings
from myrm_tui.settings.trust import ALWAYS, IGNORE, ONCE, WorkspaceTrust, tighten_only_keys
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.screens.dialogs import Dialog


@dataclass(frozen=True)
class TrustPrompt:
    """What the app needs to ask: the file's state, and how to act on the answer.

    `settle` turns a choice into the settings to use from now on (None: keep the current ones)
    and one line for the user; it lives with the command that loaded the settings, which knows
    the flags and the workspace."""

    trust: WorkspaceTrust
    settle: Callable[[str], tuple[Settings | None, str]]


class TrustScreen(Dialog[str]):
    DEFAULT_CSS = sibling_css(__file__)
    SCOPED_CSS = False  # the rules select this screen itself (#trust-dialog), like dialogs.tcss
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "ignore", "Ignore them", id="trust.ignore"),
    ]

    def __init__(self, trust: WorkspaceTrust) -> None:
        super().__init__(classes="dialog", id="trust-dialog")
        self.trust = trust

    def compose(self) -> ComposeResult:
        count = len(self.trust.entries)
        with Vertical(classes="box"):
            yield Static(Content("Trust this workspace's settings?"), classes="title")
            yield Static(
                Content(
                    f"{self.trust.config_file} came with this folder. It sets {count} value(s) that decide "
                    "what runs or where your prompts and API keys go; they are ignored until you trust it:"
                ),
                classes="message",
            )
            with VerticalScroll(id="trust-entries"):
                yield Static(Content(self.trust.listing("\n")), id="trust-listing")
            yield Static(
                Content(f"Trusted or not, a workspace file can only make {tighten_only_keys()} stricter."),
                classes="message",
            )
            yield OptionList(
                Option("Ignore them and continue (the rest of the file applies)", id=IGNORE),
                Option("Trust them for this session only", id=ONCE),
                Option(f"Always trust this version of the file (sha256 {self.trust.short_digest()}…)", id=ALWAYS),
                id="trust-choices",
            )
            yield Static(Content("Enter to choose · Esc ignores · an edited file asks again"), classes="hint")

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 0
        choices.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id or IGNORE)

    def action_ignore(self) -> None:
        self.dismiss(IGNORE)
