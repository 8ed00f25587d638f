"""Key sequences Textual's parser reads wrongly, taught to it once at start.

Why: terminals send Alt+Enter as ESC CR (and some as ESC LF). Textual 8's parser turns an ESC
followed by a character with a table entry into that entry alone, so Alt+Enter arrives as a
plain Enter and the prompt *sends* the draft the user wanted to break into two lines. Adding the
two sequences to the parser's table makes them the `alt+enter` key that the prompt binds to
"newline". The table is Textual's internal one; `tests/tui/test_input_keys.py` feeds the raw
bytes through the real parser, so an upgrade that changes it fails loudly instead of silently
sending drafts again.
"""

from __future__ import annotations

from enum import StrEnum
from typing import cast


class ExtraKey(StrEnum):
    """Key names for sequences Textual's own `Keys` enum has no member for."""

    ALT_ENTER = "alt+enter"


EXTRA_SEQUENCES: dict[str, tuple[ExtraKey, ...]] = {
    "\x1b\r": (ExtraKey.ALT_ENTER,),
    "\x1b\n": (ExtraKey.ALT_ENTER,),
}


def install_extra_sequences() -> None:
    """Idempotent; a sequence Textual already maps itself is left as Textual has it."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    # A dict at runtime; Textual types it as a read-only Mapping of its own Keys.
    table = cast("dict[str, object]", ANSI_SEQUENCES_KEYS)
    for sequence, keys in EXTRA_SEQUENCES.items():
        table.setdefault(sequence, keys)
