"""Escape-sequence attacks shared by the sanitiser tests and every surface's injection tests.

Each payload is one a real terminal obeys (xterm, tmux, VTE, kitty). `inert` is the property
every terminal-bound output must have.
"""

from __future__ import annotations

ATTACKS = {
    "OSC 52 clipboard write": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "OSC 0 window title": "\x1b]0;pwned-title\x07",
    "OSC 2 window title (ST)": "\x1b]2;pwned-title\x1b\\",
    "OSC 8 hyperlink": "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\",
    "CSI clear screen + home": "\x1b[2J\x1b[H",
    "CSI cursor up + erase line": "\x1b[1A\x1b[2K",
    "DCS request": "\x1bP1$qm\x1b\\",
    "C1 8-bit CSI": "\x9b2J",
    "C1 8-bit OSC": "\x9d0;pwned\x9c",
    "bidi RLO (Trojan Source)": "access\u202e\u2066// check if admin\u2069\u2066",
    "backspace overwrite": "safe\x08\x08\x08\x08evil",
    "lone CR overwrite": "rm -rf ~\rls -la   ",
}

CONTROL_C0 = {chr(c) for c in range(0x20)} - {"\n", "\t"}
C1 = {chr(c) for c in range(0x7F, 0xA0)}
BIDI = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
FORBIDDEN = CONTROL_C0 | C1 | BIDI


def inert(text: str) -> bool:
    """Nothing a terminal acts on: no C0 but LF/TAB, no ESC, no DEL/C1, no bidi control."""
    return not (set(text) & FORBIDDEN) and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)
