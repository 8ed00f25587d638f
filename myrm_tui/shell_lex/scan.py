"""Scanning primitives of the bash lexer: where a quote, backtick or bracket ends, and what an
ANSI-C string (`$'...'`) means.

Why apart from the lexer: static expansion (shell_lex.expand) needs the same "where does this
end" answers without building words, and both must agree with the lexer on every quote rule.
"""

from __future__ import annotations

import re

_ANSI_C = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def matching_close(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the `close` that balances the `open_` before `start`, honouring quotes
    and nested substitutions; len(text) when unbalanced."""
    depth = 1
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if ch == '"':
            i = end_of_double(text, i + 1)
            continue
        if ch == "`":
            i = end_of_backtick(text, i + 1)
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def end_of_double(text: str, i: int) -> int:
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            return i + 1
        if text.startswith("$(", i):
            i = matching_close(text, i + 2, "(", ")")
            continue
        if ch == "`":
            i = end_of_backtick(text, i + 1)
            continue
        i += 1
    return len(text)


def end_of_backtick(text: str, i: int) -> int:
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i + 1
        i += 1
    return len(text)


def ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_C:
            out.append(_ANSI_C[nxt])
            i += 2
        elif nxt == "x":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            out.append(chr(int(digits.group(), 16)) if digits else "x")
            i += 2 + (len(digits.group()) if digits else 0)
        elif nxt in "uU":
            digits = re.match(r"[0-9a-fA-F]{1,8}" if nxt == "U" else r"[0-9a-fA-F]{1,4}", body[i + 2 :])
            try:
                out.append(chr(int(digits.group(), 16)) if digits else nxt)
            except (ValueError, OverflowError):
                out.append("\ufffd")
            i += 2 + (len(digits.group()) if digits else 0)
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert digits is not None
            out.append(chr(int(digits.group(), 8) & 0xFF))
            i += 1 + len(digits.group())
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)
