"""The undo preview: which files go back, the diff of each (now → restored), and a confirmation.

Why a preview before every undo: restoring overwrites the working tree, so the user sees exactly
what changes first. A file changed since the turn wrote it is flagged, and plain "Restore" is
disabled while any is: overwriting someone's later edit takes its own, deliberate key.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from myrm_tui.agent.undo.rewind import UndoPlan, summary
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.formatting import pretty_key
from myrm_tui.tui.screens.dialogs import Dialog
from myrm_tui.tui.widgets.approval import diff_content

RESTORE = "restore"
FORCE = "force"
# Diff lines shown per file: enough for a typical edit; the rest is counted, not drawn.
PREVIEW_DIFF_LINES = 60


class UndoScreen(Dialog[str | None]):
    """Dismisses with RESTORE, FORCE or None (cancelled)."""

    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="undo.cancel"),
        Binding("y", "restore", "Restore", id="undo.restore"),
        Binding("ctrl+f", "force", "Overwrite my edits", id="undo.force"),
    ]

    def __init__(self, title: str, plan: UndoPlan) -> None:
        super().__init__(classes="dialog wide", id="undo-dialog")
        self.title_text = title
        self.plan = plan

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(for_terminal(self.title_text)), classes="title")
            yield Static(Content(for_terminal(summary(self.plan))), id="undo-files")
            if self.plan.conflicts:
                names = ", ".join(f.path for f in self.plan.conflicts)
                yield Static(
                    Content(
                        for_terminal(
                            f"Changed since the turn wrote them: {names}. Restoring would overwrite those edits."
                        )
                    ),
                    id="undo-conflict",
                )
            with VerticalScroll(classes="scroll", id="undo-diffs"):
                for item in self.plan.files:
                    yield Static(diff_content(item.diff, PREVIEW_DIFF_LINES), classes="undo-diff")
            with Horizontal(classes="buttons"):
                yield Button("Restore", variant="primary", id=RESTORE, disabled=bool(self.plan.conflicts))
                if self.plan.conflicts:
                    yield Button("Overwrite my edits", variant="error", id=FORCE)
                yield Button("Cancel", id="cancel")
            yield Static(Content(self._hint()), classes="hint")

    def _hint(self) -> str:
        keymap = getattr(self.app, "_keymap", {}) or {}

        def key(binding_id: str, default: str) -> str:
            return pretty_key(keymap.get(binding_id, default))

        if self.plan.conflicts:
            return f"{key('undo.force', 'ctrl+f')} overwrites · {key('undo.cancel', 'escape')} cancels"
        return f"{key('undo.restore', 'y')} restores · {key('undo.cancel', 'escape')} cancels"

    def on_mount(self) -> None:
        self.query_one("#cancel" if self.plan.conflicts else f"#{RESTORE}", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id if event.button.id in (RESTORE, FORCE) else None)

    def action_restore(self) -> None:
        if not self.plan.conflicts:
            self.dismiss(RESTORE)
        else:
            self.notify(
                "Some files changed since; use “Overwrite my edits” to restore them anyway.", severity="warning"
            )

    def action_force(self) -> None:
        if self.plan.conflicts:
            self.dismiss(FORCE)

    def action_cancel(self) -> None:
        self.dismiss(None)
