"""The vaulted-result card: a tool or subagent result whose whole text went to the vault.

Why a card and not the block's plain preview: the user should see at a glance what the model
did NOT get (the size of the whole), what it got instead (the tier: an excerpt, a model summary,
a subagent's head and tail), the handle, and the exact hint the model was given to read the rest,
so "why did the agent not see line 9,000?" has its answer on screen. One key (or the button)
opens the whole text in the full-output viewer.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.transcript.vaulted_result import VaultedResult

# The key that opens the whole text from a focused card, and its binding id (the keymap setting).
OPEN_FULL_KEY = "o"
OPEN_FULL_BINDING = "vault_card.open_full"
_VAULT_GLYPH = "⛁"


def _size(result: VaultedResult) -> str:
    lines = f" · {result.total_lines:,} lines" if result.total_lines is not None else ""
    return f"{result.total_chars:,} chars{lines}"


class VaultCard(Vertical, can_focus=True):
    """Shown inside a ToolBlock (tool_block.py) when its result names a vault handle."""

    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(OPEN_FULL_KEY, "open_full", "Open full text", show=False, id=OPEN_FULL_BINDING),
    ]

    class OpenFull(Message):
        """The user asked for the whole text; the enclosing block opens its viewer."""

    def __init__(self, result: VaultedResult) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        r = self.result
        yield Static(
            Content.assemble(
                (f"{_VAULT_GLYPH} in the vault", "bold $text-accent"),
                "  ",
                (_size(r), "$text"),
                "  ",
                (for_terminal(r.handle), "$text-muted"),
            ),
            classes="title",
        )
        yield Static(Content.assemble(("model got  ", "$text-muted"), for_terminal(r.tier)), classes="tier")
        if r.head:
            yield Static(Content(for_terminal(r.head)), classes="head")
        yield Static(Content.assemble(("model hint ", "$text-muted"), for_terminal(r.hint)), classes="hint")
        yield Button(f"open full text ({self.open_key()})", id="open-full", compact=True)

    def open_key(self) -> str:
        """The key the card answers to: the user's keymap wins over the default."""
        try:
            keymap = getattr(self.app, "_keymap", None) or {}
        except Exception:  # noqa: BLE001 - not mounted in an app yet
            keymap = {}
        return str(keymap.get(OPEN_FULL_BINDING, OPEN_FULL_KEY)).split(",")[0]

    def text(self) -> str:
        """The card as plain text (what tests and screen readers see)."""
        r = self.result
        parts = [f"{_VAULT_GLYPH} in the vault  {_size(r)}  {r.handle}", f"model got  {r.tier}"]
        if r.head:
            parts.append(r.head)
        parts += [f"model hint {r.hint}", f"open full text ({self.open_key()})"]
        return for_terminal("\n".join(parts))

    def action_open_full(self) -> None:
        self.post_message(self.OpenFull())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_open_full()
