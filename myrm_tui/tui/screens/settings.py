"""The settings screen, generated from the one schema (`myrm_tui.settings.schema.SETTINGS`).

Each setting gets the input its type calls for (a Select for choices, a Switch for booleans,
an Input for numbers and text), grouped by section, "advanced" collapsed. Save validates every
field first and keeps the screen open on a bad value (nothing typed is lost); it dismisses with
only the values that changed, and the chat screen saves and applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Input, Select, Static, Switch

from myrm_tui.settings import SETTINGS, Settings, SettingSpec
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.scope import ScopedChoice
from myrm_tui.tui.screens.dialogs import Dialog
from myrm_tui.tui.screens.model_picker import FOR_DEFAULT, ModelPicker

# Sections in screen order; any other section in the schema follows, "advanced" always last.
SECTION_ORDER = ("general", "tools", "appearance")
COLLAPSED_SECTIONS = frozenset({"advanced"})
# Below this many terminal columns the form is one column: the dialog box is 96 wide at most
# and 90% below that, so under 100 columns a 40-wide field column would leave the name and help
# about 20 columns and cut words such as "anthropic/claude-sonnet-4-5" in two.
TWO_COLUMN_MIN_WIDTH = 100


class SettingError(ValueError):
    """A field holds a value of the wrong type; the message names the field."""


def sections() -> list[tuple[str, list[SettingSpec]]]:
    grouped: dict[str, list[SettingSpec]] = {}
    for spec in SETTINGS:
        grouped.setdefault(spec.section, []).append(spec)
    order = [s for s in SECTION_ORDER if s in grouped]
    order += [s for s in grouped if s not in order and s not in COLLAPSED_SECTIONS]
    order += [s for s in grouped if s in COLLAPSED_SECTIONS]
    return [(name, grouped[name]) for name in order]


def parse_value(spec: SettingSpec, raw: Any) -> Any:
    """A widget's value as the schema type; SettingError with a readable reason otherwise."""
    if spec.type is bool:
        return bool(raw)
    text = "" if raw is None else str(raw).strip()
    if spec.type is int:
        try:
            return int(text)
        except ValueError:
            raise SettingError(f"{spec.key} must be a whole number, not {text!r}.") from None
    if spec.type is float:
        try:
            return float(text)
        except ValueError:
            raise SettingError(f"{spec.key} must be a number, not {text!r}.") from None
    if spec.choices and text not in spec.choices:
        raise SettingError(f"{spec.key} must be one of {', '.join(spec.choices)}.")
    return text


def changed_values(current: Settings, values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if getattr(current, key) != value}


class SettingsScreen(Dialog[dict[str, Any] | None]):
    DEFAULT_CSS = sibling_css(__file__)
    SCOPED_CSS = False  # the rules name the screen itself (#settings-screen.-narrow)
    # Not ClassVar: Textual's own annotation (`ClassVar[...] | None`) reads as an instance attribute.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [(0, "-narrow"), (TWO_COLUMN_MIN_WIDTH, "-roomy")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="settings.cancel"),
        Binding("ctrl+s", "save", "Save", id="settings.save"),
    ]

    def __init__(
        self, settings: Settings, themes: list[str], config_path: str = "", effective: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(classes="dialog wide", id="settings-screen")
        self.settings = settings
        self.themes = themes
        self.config_path = config_path
        # What an empty text field means now (the automatic lite model): shown as its placeholder,
        # so the effective value is visible while saving keeps the setting empty (automatic).
        self.effective = dict(effective or {})

    def _field(self, spec: SettingSpec) -> Widget:
        value = getattr(self.settings, spec.key)
        field_id = f"setting-{spec.key}"
        if spec.key == "theme":
            names = sorted(set(self.themes) | {str(value)})
            return Select([(n, n) for n in names], value=str(value), allow_blank=False, id=field_id)
        if spec.choices:
            return Select(
                [(c, c) for c in spec.choices],
                value=value if value in spec.choices else spec.choices[0],
                allow_blank=False,
                id=field_id,
            )
        if spec.type is bool:
            return Switch(bool(value), id=field_id)
        kinds: dict[type, Literal["integer", "number"]] = {int: "integer", float: "number"}
        placeholder = for_terminal(self.effective.get(spec.key, ""))
        return Input(str(value), placeholder=placeholder, type=kinds.get(spec.type, "text"), id=field_id)

    def _row(self, spec: SettingSpec) -> ComposeResult:
        with Horizontal(classes="setting-row -model" if spec.key == "model" else "setting-row"):
            with Vertical(classes="setting-label"):
                yield Static(Content(spec.key), classes="setting-name")
                yield Static(Content(spec.help), classes="setting-help")
            with Horizontal(classes="setting-input"):
                yield self._field(spec)
                if spec.key == "model":
                    yield Button("Pick…", id="pick-model")

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content("Settings"), classes="title")
            with VerticalScroll(classes="scroll"):
                for name, specs in sections():
                    with Collapsible(title=name, collapsed=name in COLLAPSED_SECTIONS, id=f"section-{name}"):
                        for spec in specs:
                            yield from self._row(spec)
            yield Static("", id="settings-error")
            # The hint shares the buttons' row: at 24 lines every row given to the form counts.
            with Horizontal(classes="footer"):
                where = f"saved to {self.config_path}" if self.config_path else "saved to your user config"
                yield Static(Content(for_terminal(f"Ctrl+S save ({where}) · Esc cancel")), classes="hint")
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        # The first field, not the scroll area: typing should edit a setting straight away.
        first = sections()[0][1][0]
        self.widget_for(first.key).focus()

    def widget_for(self, key: str) -> Widget:
        return self.query_one(f"#setting-{key}")

    def values(self) -> dict[str, Any]:
        """Every field, typed; raises SettingError for the first bad one."""
        out: dict[str, Any] = {}
        for spec in SETTINGS:
            widget = self.widget_for(spec.key)
            raw = widget.value  # type: ignore[attr-defined]
            out[spec.key] = parse_value(spec, raw)
        return out

    def action_save(self) -> None:
        try:
            values = self.values()
        except SettingError as exc:
            self._show_error(str(exc))
            return
        changes = changed_values(self.settings, values)
        if changes.get("model"):
            self._check_model_then_save(str(changes["model"]), changes)
            return
        self.dismiss(changes)

    def _show_error(self, text: str) -> None:
        error = self.query_one("#settings-error", Static)
        error.update(Content(for_terminal(text)))
        error.add_class("-shown")

    @work(thread=True, exclusive=True, group="settings-model-check", exit_on_error=False)
    def _check_model_then_save(self, model: str, changes: dict[str, Any]) -> None:
        """A new model name goes through the model-name check (llm/models/check.py) before it is
        saved: a name nobody serves stays in the field with the reason and what was meant. Off
        the UI thread: a name the bundled map does not know is looked up by litellm."""
        from myrm_tui.llm.models.check import check_model

        check = check_model(model, self.settings.models, self.settings.api_base or None)
        self.app.call_from_thread(self._model_checked, check, changes)

    def _model_checked(self, check: Any, changes: dict[str, Any]) -> None:
        if not check.known:
            self._show_error(f"model: {check.problem}")
            return
        self.dismiss(changes)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#pick-model")
    def _pick(self) -> None:
        field = self.query_one("#setting-model", Input)

        def picked(choice: ScopedChoice | None) -> None:
            # Only the name: this screen saves what Save saves, the picker's make-default aside.
            if choice is not None and choice.name:
                field.value = choice.name

        declared = getattr(getattr(self.app, "settings", None), "models", None)
        self.app.push_screen(ModelPicker(field.value, declared, purpose=FOR_DEFAULT), picked)
