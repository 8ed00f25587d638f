"""Searchable model picker over the model registry (window, price and capability flags).

The registry reads litellm's model map, whose import takes seconds, so every search runs in a
thread worker and the list fills in when it returns. A name that is not in the registry (a
local server's model, a scripted test model) can still be typed and accepted with Enter.

Enter switches this session only; the make-default key also writes the choice to the user
config (tui/scope.py says why a switch is not a default unless asked).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.tui.constants import MODEL_PICKER_LIMIT
from myrm_tui.tui.formatting import format_tokens, pretty_key
from myrm_tui.tui.scope import ScopedChoice
from myrm_tui.tui.screens.dialogs import Dialog


def model_row(info: Any) -> str:
    """One picker row: name, window, $ per million tokens in/out, capability flags."""
    price = ""
    if info.input_cost_per_token or info.output_cost_per_token:
        price = f"  ${info.input_cost_per_token * 1e6:.2f}/${info.output_cost_per_token * 1e6:.2f} per M"
    flags = [
        name
        for name, on_ in (
            ("tools", info.supports_tools),
            ("vision", info.supports_vision),
            ("cache", info.supports_prompt_caching),
        )
        if on_
    ]
    return f"{info.name}  ·  {format_tokens(info.context_window)} window{price}  ·  {' '.join(flags) or '—'}"


def search_models(query: str, overrides: Any = None) -> list[Any]:
    from myrm_tui.llm import registry

    return registry.search(query, limit=MODEL_PICKER_LIMIT, overrides=overrides)


MAKE_DEFAULT_BINDING = "picker.make_default"
MAKE_DEFAULT_KEY = "ctrl+s"  # "save": the one choice here that writes a file


class ModelPicker(Dialog[ScopedChoice | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("down", "to_list", "List", show=False, id="picker.to_list"),
        # Priority: the search Input would otherwise see the key first.
        Binding(MAKE_DEFAULT_KEY, "make_default", "Use and make default", priority=True, id=MAKE_DEFAULT_BINDING),
    ]

    def __init__(self, current: str | None = None, overrides: Any = None) -> None:
        super().__init__(classes="dialog wide")
        self.current = current or ""
        self.overrides = overrides  # [models."X"] from config: declared models are listed first
        self.results: list[Any] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(f"Switch model for this session (now: {self.current or 'none'})"), classes="title")
            yield Input(placeholder="type to search, or a full model name + Enter", id="model-query")
            yield OptionList(id="model-list")
            yield Static(
                Content(
                    f"Enter this session · {self._make_default_key()} make default (saved to "
                    "your config) · ↓ to the list · Esc cancel"
                ),
                classes="hint",
                id="model-hint",
            )

    def _make_default_key(self) -> str:
        keymap = getattr(self.app, "_keymap", {}) or {}
        return pretty_key(keymap.get(MAKE_DEFAULT_BINDING, MAKE_DEFAULT_KEY).split(",")[0])

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._search("")

    @on(Input.Changed, "#model-query")
    def _changed(self, event: Input.Changed) -> None:
        self._search(event.value)

    @work(thread=True, exclusive=True, group="model-search", exit_on_error=False)
    def _search(self, query: str) -> None:
        try:
            results = search_models(query, self.overrides)
        except Exception as exc:  # noqa: BLE001 - no registry: typing a name still works
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._show, results)

    def _failed(self, reason: str) -> None:
        self.query_one(OptionList).set_options(
            [Option(f"model list unavailable ({reason}); type a full name and press Enter", disabled=True)]
        )

    def _show(self, results: list[Any]) -> None:
        self.results = results
        listing = self.query_one(OptionList)
        listing.set_options([Option(Content(model_row(info)), id=info.name) for info in results])
        if not results:
            listing.set_options([Option("no match in the registry; Enter uses the typed name", disabled=True)])

    def _typed_choice(self) -> str | None:
        """The typed name when it is meant as-is, else the highlighted row's."""
        name = self.query_one(Input).value.strip()
        listing = self.query_one(OptionList)
        exact = any(info.name == name for info in self.results)
        if name and (exact or "/" in name or not self.results):
            return name
        if self.results:
            return str(self.results[listing.highlighted or 0].name)
        return None

    @on(Input.Submitted, "#model-query")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        name = self._typed_choice()
        if name:
            self.dismiss(ScopedChoice(name))

    @on(OptionList.OptionSelected, "#model-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.dismiss(ScopedChoice(event.option.id))

    def action_make_default(self) -> None:
        listing = self.query_one(OptionList)
        if listing.has_focus and self.results and listing.highlighted is not None:
            name: str | None = str(self.results[listing.highlighted].name)
        else:
            name = self._typed_choice()
        if name:
            self.dismiss(ScopedChoice(name, make_default=True))

    def action_to_list(self) -> None:
        listing = self.query_one(OptionList)
        if self.results:
            listing.focus()
            if listing.highlighted is None:
                listing.highlighted = 0

    def action_cancel(self) -> None:
        self.dismiss(None)
