"""One tool call: a header line (status, name, argument summary, duration) over its output.

Collapsed by default so a long agent run reads as a list of actions; a failed call opens
itself because that is the one the user needs to read. While a command runs, the tail of its
live output shows under the header (the stored result replaces it when the call finishes).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import (
    LIVE_OUTPUT_BUFFER_CHARS,
    LIVE_OUTPUT_TAIL_LINES,
    TOOL_OUTPUT_DISPLAY_CHARS,
    TOOL_STATUS_GLYPHS,
)
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.formatting import format_duration, summarize_arguments, tail_lines
from myrm_tui.tui.transcript.tool_preview import ToolPreview, preview_text, tool_preview
from myrm_tui.tui.transcript.vaulted_result import vaulted_result
from myrm_tui.tui.widgets.blocks.vault_card import VaultCard

# The key that opens a focused block's whole output in the viewer, and its binding id (keymap).
OPEN_OUTPUT_KEY = "o"
OPEN_OUTPUT_BINDING = "tool.open_output"

# Statuses after which the block opens by itself.
_FAILED = frozenset({"error", "timeout"})

_GLYPH_STYLE = {
    "pending": "$text-muted",
    "running": "$text-accent",
    "ok": "$text-success",
    "error": "$text-error",
    "denied": "$text-warning",
    "timeout": "$text-error",
    "interrupted": "$text-warning",
}


class ToolHeader(Static, can_focus=True):
    """The clickable, focusable one-line summary; Enter or a click toggles the output."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_output", "Toggle output", show=False, id="tool.toggle"),
        Binding(OPEN_OUTPUT_KEY, "open_output", "Open full output", show=False, id=OPEN_OUTPUT_BINDING),
    ]

    # Not `action_toggle`: that name is DOMNode's `toggle(attribute)` action, which this must not
    # replace with an incompatible signature.
    def action_toggle_output(self) -> None:
        block = self.parent
        if isinstance(block, ToolBlock):
            block.expanded = not block.expanded

    def action_open_output(self) -> None:
        block = self.parent
        if isinstance(block, ToolBlock):
            block.open_output()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle_output()


class ToolBlock(Vertical):
    DEFAULT_CSS = sibling_css(__file__)

    class OpenOutput(Message):
        """Asks for the full-output viewer on one call; the app opens it (MyrmApp, since widgets sit
        below screens and do not import them)."""

        def __init__(self, title: str, vault: Any, handle: str | None, stored: str) -> None:
            super().__init__()
            self.title = title
            self.vault = vault  # the store's Vault, or None outside an app with a store
            self.handle = handle
            self.stored = stored

    expanded: reactive[bool] = reactive(False, toggle_class="-expanded")
    status: reactive[str] = reactive("pending")

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any] | str | None) -> None:
        super().__init__()
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.summary = summarize_arguments(arguments)
        self.duration_s: float | None = None
        self.content: str | None = None
        self.vault_handle: str | None = None
        self.preview: ToolPreview | None = None
        self.live_text = ""
        self._header = ToolHeader(classes="header")
        self._live = Static("", classes="live")
        self._output = Static("", classes="output")
        self._card: VaultCard | None = None  # the vaulted-result card, when the result was spilled

    def compose(self) -> ComposeResult:
        yield self._header
        if self._card is not None:
            yield self._card
        yield self._live
        yield self._output

    def on_mount(self) -> None:
        self._render_header()

    def watch_status(self, status: str) -> None:
        for name in TOOL_STATUS_GLYPHS:
            self.set_class(name == status, f"-{name}")
        if self.is_mounted:
            self._render_header()

    def header_text(self) -> str:
        """The header as plain text (what tests and screen readers see)."""
        parts = [TOOL_STATUS_GLYPHS.get(self.status, "?"), self.tool_name]
        if self.summary:
            parts.append(self.summary)
        if self.duration_s is not None:
            parts.append(f"({format_duration(self.duration_s)})")
        if self.status not in ("ok", "running", "pending"):
            parts.append(self.status)
        return for_terminal(" ".join(parts))

    def _render_header(self) -> None:
        glyph = TOOL_STATUS_GLYPHS.get(self.status, "?")
        pieces: list[str | tuple[str, str]] = [
            (glyph, _GLYPH_STYLE.get(self.status, "")),
            " ",
            (for_terminal(self.tool_name), "bold"),  # the model names the tool: data
        ]
        if self.summary:
            pieces += ["  ", (for_terminal(self.summary), "$text-muted")]
        if self.duration_s is not None:
            pieces += ["  ", (format_duration(self.duration_s), "$text-muted")]
        if self.status not in ("ok", "running", "pending"):
            pieces += ["  ", (self.status, _GLYPH_STYLE.get(self.status, ""))]
        self._header.update(Content.assemble(*pieces))

    # lifecycle --------------------------------------------------------------------------------

    def start(self, arguments: dict[str, Any] | None = None) -> None:
        if arguments is not None:
            self.arguments = arguments
            self.summary = summarize_arguments(arguments)
        self.status = "running"

    def append_live(self, text: str) -> None:
        self.live_text = (self.live_text + text)[-LIVE_OUTPUT_BUFFER_CHARS:]
        self._live.update(Content(for_terminal(tail_lines(self.live_text, LIVE_OUTPUT_TAIL_LINES))))
        self._live.display = True

    def finish(self, status: str, content: str, duration_s: float | None, vault_handle: str | None = None) -> None:
        self.duration_s = duration_s
        self.content = content
        # A history block has no handle of its own: the stored result's spill marker names it.
        self.preview = tool_preview(content, TOOL_OUTPUT_DISPLAY_CHARS, vault_handle)
        self.vault_handle = self.preview.handle
        shown = preview_text(self.preview, self._open_key())
        self._output.update(Content(for_terminal(shown)))  # tool output is data
        self._live.display = False
        self._place_card(content)
        self.status = status
        if self.is_mounted:
            self._render_header()  # the duration changed even when the status did not
        if status in _FAILED:
            self.expanded = True

    def _place_card(self, content: str) -> None:
        """The vaulted-result card under the header when the whole result went to the vault
        (a history block is finished before it mounts: compose yields the card then)."""
        vaulted = vaulted_result(content)
        old, self._card = self._card, VaultCard(vaulted) if vaulted is not None else None
        if vaulted is not None and self.vault_handle is None:
            self.vault_handle = vaulted.handle  # a subagent's answer names its handle in a hint line
        if self.is_mounted:
            if old is not None:
                old.remove()
            if self._card is not None:
                self.mount(self._card, after=self._header)

    def on_vault_card_open_full(self, event: VaultCard.OpenFull) -> None:
        event.stop()
        self.open_output()

    # the full output ---------------------------------------------------------------------------

    def _open_key(self) -> str:
        """The key shown in the hint: the user's keymap wins over the default."""
        try:
            keymap = getattr(self.app, "_keymap", None) or {}
        except Exception:  # noqa: BLE001 - not mounted in an app yet (history blocks are built first)
            keymap = {}
        return str(keymap.get(OPEN_OUTPUT_BINDING, OPEN_OUTPUT_KEY)).split(",")[0]

    def open_output(self) -> None:
        """Open the viewer on this call's whole output (the vault artifact, else the stored result)."""
        if self.content is None:
            self.notify("No output yet: the call has not finished.", severity="warning")
            return
        vault = getattr(getattr(self.app, "store", None), "vault", None)
        title = " ".join(part for part in (self.tool_name, self.summary) if part)
        self.post_message(self.OpenOutput(title, vault, self.vault_handle, self.content))
