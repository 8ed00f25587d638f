"""Text bound for a terminal is shown as data, never obeyed as commands.

Model replies, tool output, file contents and session titles are untrusted. A terminal treats
some characters in them as instructions: ESC starts CSI (clear, move the cursor), OSC 0/2 (set
the window title), OSC 8 (hyperlinks), OSC 52 (write the clipboard) and DCS; BEL and ST end
them; the C1 range (U+0080–U+009F) holds 8-bit forms of the same (U+009B is CSI) in terminals
that honour them; backspace, CR, VT and FF move the cursor over text already drawn; Unicode
bidi controls make the displayed order of a line differ from the order that runs (Trojan
Source). `for_terminal` replaces each such character by its visible escape (`\\x1b`,
`\\x9b`, `\\u202e`), so what the user sees is what is there.

Rules, and why:
- Newline and tab are kept: they only lay text out.
- CR LF becomes LF (Windows line endings read normally); a lone CR becomes `\\r`. A lone CR
  returns the cursor to the line start, so the text after it would hide the text before it
  (`rm -rf ~\\rls`); progress bars lose their in-place redraw, which is the price of showing
  every byte that is there. A CR LF split across two streamed chunks shows as `\\r` and a
  newline: visible and harmless.
- Lone UTF-16 surrogates (from a model's JSON such as "\\ud83d") are escaped too: they are
  not text, and writing one to a UTF-8 stream raises.
- Backslashes are not doubled: the function is idempotent, and a literal `\\x1b` written by
  the model is as inert as the one we produce.
- Each character is replaced on its own, so a sequence split across streamed chunks is made
  inert piecewise: for_terminal(a) + for_terminal(b) == for_terminal(a + b), except for the
  CR LF pair above.

This runs at the sinks (what is printed or rendered), never in the store: the store keeps what
the model and the tools produced byte for byte, and the prompt sent to the model is not a
terminal. Pure stdlib, importable by every layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Code point ranges (inclusive) a terminal may obey instead of drawing: C0 except TAB (09) and
# LF (0a), DEL with C1, the Unicode Bidi_Control characters (ALM; LRM, RLM; LRE…RLO; LRI…PDI)
# and lone surrogates.
_C0 = ((0x00, 0x08), (0x0B, 0x1F))
_DEL_C1 = ((0x7F, 0x9F),)
_BIDI = ((0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069))
_SURROGATES = ((0xD800, 0xDFFF),)
_UNSAFE = _C0 + _DEL_C1 + _BIDI + _SURROGATES
# What JSON leaves raw with ensure_ascii=False (it escapes C0 itself); inside a JSON document
# these can only occur in strings.
_JSON_RAW = _DEL_C1 + _BIDI + _SURROGATES


def _runs(ranges: tuple[tuple[int, int], ...]) -> re.Pattern[str]:
    """One character class for all ranges, matching runs: a dense run (a screenful of ANSI
    colour codes) costs one callback and one C-level translate, not a Python call per char."""
    return re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges) + "]+")


def _table(ranges: tuple[tuple[int, int], ...], escape: Callable[[int], str]) -> dict[int, str]:
    return {code: escape(code) for a, b in ranges for code in range(a, b + 1)}


def _visible(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_UNSAFE_RUN = _runs(_UNSAFE)
_ESCAPES = _table(_UNSAFE, _visible)
_JSON_RUN = _runs(_JSON_RAW)
_JSON_ESCAPES = _table(_JSON_RAW, lambda code: f"\\u{code:04x}")


def for_terminal(text: str) -> str:
    """`text` with every character a terminal could obey replaced by a visible escape."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if _UNSAFE_RUN.search(text) is None:  # the common case: one C-speed scan, no copy
        return text
    return _UNSAFE_RUN.sub(lambda run: run.group().translate(_ESCAPES), text)


def json_for_terminal(document: str) -> str:
    """A JSON document (from json.dumps(..., ensure_ascii=False)) made safe to print.

    JSON already escapes C0 (ESC is written `\\u001b`), but leaves DEL, C1, bidi controls and
    lone surrogates raw. They can only stand inside JSON strings, so writing them as `\\uXXXX`
    escapes yields the same document for any JSON reader: lossless, unlike `for_terminal`.
    """
    if _JSON_RUN.search(document) is None:
        return document
    return _JSON_RUN.sub(lambda run: run.group().translate(_JSON_ESCAPES), document)
