"""Searchable model picker over the model registry (window, price, capability flags, READY).

Every search runs in a thread worker and the list fills in when it returns. Rows are named as
`--model` takes them ("openai/gpt-4o") and marked READY when the model can run from here now
(its provider's key is set, or it needs none: llm/models/check.py). A typed name goes through
the same model-name check as `myrm run --model`: a name nobody serves ("gpt4o") is not taken;
the list shows why and what was probably meant, to pick with Enter.

Opened from the chat (Ctrl+O), Enter switches this session only and the make-default key also
writes the choice to the user config (tui/scope.py says why a switch is not a default unless
asked). Opened from the settings screen it chooses the default model the settings screen saves.
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

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import MODEL_PICKER_LIMIT
from myrm_tui.tui.formatting import format_tokens, pretty_key
from myrm_tui.tui.scope import ScopedChoice
from myrm_tui.tui.screens.dialogs import Dialog

# The READY column: runs from here now, or why not yet (a provider key to export).
READY_MARK, NOT_READY_MARK = "READY", "no key"
# Why the picker was opened: to switch the chat's model (this session, or made the default), or
# to fill the settings screen's model field (the default, saved when the settings are saved).
FOR_SESSION, FOR_DEFAULT = "session", "default"


def model_row(info: Any, ready: bool | None = None) -> str:
    """One picker row: READY (or "no key"), name, window, $ per million tokens in/out, capability
    flags. `ready` None: not judged (a row built outside the picker)."""
    mark = "" if ready is None else f"{READY_MARK if ready else NOT_READY_MARK:<6}  "
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
    return f"{mark}{info.name}  ·  {format_tokens(info.context_window)} window{price}  ·  {' '.join(flags) or '—'}"


def search_models(query: str, overrides: Any = None) -> list[tuple[Any, bool]]:
    """(ModelInfo named as --model takes it, READY) for the rows matching `query`."""
    from myrm_tui.llm.models import registry
    from myrm_tui.llm.models.check import is_ready

    found = registry.search(query, limit=MODEL_PICKER_LIMIT, overrides=overrides)
    return [(info, is_ready(info, overrides)) for info in found]


def check_name(name: str, overrides: Any = None) -> Any:
    """llm.model_check.check_model: the one check `myrm run --model` uses too."""
    from myrm_tui.llm.models.check import check_model

    return check_model(name, overrides)


MAKE_DEFAULT_BINDING = "picker.make_default"
MAKE_DEFAULT_KEY = "ctrl+s"  # "save": the one choice here that writes a file


class ModelPicker(Dialog[ScopedChoice | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("down", "to_list", "List", show=False, id="picker.to_list"),
        # Priority: the search Input would otherwise see the key first.
        Binding(MAKE_DEFAULT_KEY, "make_default", "Use and make default", priority=True, id=MAKE_DEFAULT_BINDING),
    ]

    def __init__(self, current: str | None = None, overrides: Any = None, purpose: str = FOR_SESSION) -> None:
        super().__init__(classes="dialog wide")
        self.current = current or ""
        self.overrides = overrides  # [models."X"] from config: declared models are listed first
        self.purpose = purpose
        self.results: list[Any] = []

    def compose(self) -> ComposeResult:
        now = for_terminal(self.current or "none")
        if self.purpose == FOR_DEFAULT:
            title = f"Choose the default model (now: {now}); Save in the settings saves it"
            hint = "Enter choose · ↓ to the list · Esc cancel · READY: its key is set, or it needs none"
        else:
            title = f"Switch model for this session (now: {now})"
            hint = (
                f"Enter this session · {self._make_default_key()} make default (saved to your config) · "
                "↓ to the list · Esc cancel · READY: its key is set, or it needs none"
            )
        with Vertical(classes="box"):
            yield Static(Content(title), classes="title", id="model-title")
            yield Input(placeholder="type to search, or a full model name + Enter", id="model-query")
            yield OptionList(id="model-list")
            yield Static(Content(hint), classes="hint", id="model-hint")

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

    def _show(self, results: list[tuple[Any, bool]]) -> None:
        self.results = [info for info, _ready in results]
        listing = self.query_one(OptionList)
        listing.set_options(
            [Option(Content(for_terminal(model_row(info, ready))), id=info.name) for info, ready in results]
        )
        if not results:
            listing.set_options([Option("no match in the registry; Enter checks the typed name", disabled=True)])

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
            self._check_then_choose(name, make_default=False)

    @on(OptionList.OptionSelected, "#model-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self._check_then_choose(event.option.id, make_default=False)

    def action_make_default(self) -> None:
        if self.purpose == FOR_DEFAULT:  # the settings screen saves what it holds; Enter chooses
            self.action_choose()
            return
        listing = self.query_one(OptionList)
        if listing.has_focus and self.results and listing.highlighted is not None:
            name: str | None = str(self.results[listing.highlighted].name)
        else:
            name = self._typed_choice()
        if name:
            self._check_then_choose(name, make_default=True)

    def action_choose(self) -> None:
        name = self._typed_choice()
        if name:
            self._check_then_choose(name, make_default=False)

    @work(thread=True, exclusive=True, group="model-check", exit_on_error=False)
    def _check_then_choose(self, name: str, make_default: bool) -> None:
        """The name through the model-name check (off the UI thread: a name the bundled map does
        not know is looked up by litellm, which may still be loading)."""
        check = check_name(name, self.overrides)
        self.app.call_from_thread(self._checked, check, make_default)

    def _checked(self, check: Any, make_default: bool) -> None:
        if check.known:
            self.dismiss(ScopedChoice(check.typed, make_default=make_default))
            return
        listing = self.query_one(OptionList)
        options = [Option(Content(for_terminal(check.problem or f"Unknown model {check.typed!r}.")), disabled=True)]
        options += [Option(Content(for_terminal(f"did you mean {name}")), id=name) for name in check.suggestions]
        listing.set_options(options)
        self.results = []
        if check.suggestions:
            listing.focus()
            listing.highlighted = 1

    def action_to_list(self) -> None:
        listing = self.query_one(OptionList)
        if self.results:
            listing.focus()
            if listing.highlighted is None:
                listing.highlighted = 0

    def action_cancel(self) -> None:
        self.dismiss(None)
