"""Static expansion of shell words: what `$NAME`, `${NAME:-x}`, `$(...)`, braces and printf
escapes produce when that is known without running anything (the seatbelt's view of a word).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from myrm_tui.shell_lex.scan import ansi_c, end_of_backtick, matching_close

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand_static(text: str, variables: dict[str, str], substitute: Callable[[str], str | None]) -> str | None:
    """`text` with `$NAME`, `${NAME}`, `${NAME:-word}`, `$(...)` and backticks replaced by what
    they are known to produce, or None if any of them is unknown. `substitute(body)` returns a
    command substitution's output when it can be known without running it, else None."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if text.startswith("$(", i) and not text.startswith("$((", i):
            end = matching_close(text, i + 2, "(", ")")
            value = substitute(text[i + 2 : max(i + 2, end - 1)])
            if value is None:
                return None
            out.append(value)
            i = end
        elif ch == "`":
            end = end_of_backtick(text, i + 1)
            value = substitute(text[i + 1 : max(i + 1, end - 1)])
            if value is None:
                return None
            out.append(value)
            i = end
        elif ch == "$":
            match = _VAR.match(text, i)
            if match is None:
                return None
            name = match.group(1) or match.group(4)
            if name in variables:
                out.append(variables[name])
            elif match.group(2) and match.group(2).lstrip(":") == "-":
                out.append(match.group(3) or "")  # ${unset:-default}
            else:
                return None
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def expand_braces(word: str) -> list[str]:
    """One level of brace expansion (`{rm,-rf,/}` → rm -rf /; `r{m,}` → rm r); nested or
    sequence braces are left as they are."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", word)
    if match is None:
        return [word]
    head, tail = word[: match.start()], word[match.end() :]
    return [head + part + tail for part in match.group(1).split(",")]


def printf_escapes(text: str) -> str:
    """What printf/echo -e make of backslash escapes (the same table as $'...')."""
    return ansi_c(text)
