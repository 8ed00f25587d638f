"""The only text the filters write themselves: omission markers and cut-line tags.

Why one format: the model (and the property test) must tell at a glance which lines are real
output and which are the filter speaking. A marker line is `… <what> …` on its own line
(possibly indented inside a structure); a line cut short ends with ` …[+N chars]`.
Everything else in a filter result is a verbatim line of the input.
"""

from __future__ import annotations

import re

MARKER_OPEN = "… "
MARKER_CLOSE = " …"
CUT_TAG_RE = re.compile(r" …\[\+[\d,]+ chars\]\Z")


def marker(what: str, indent: str = "") -> str:
    """A marker line, e.g. `… 1,204 lines omitted …`."""
    return f"{indent}{MARKER_OPEN}{what}{MARKER_CLOSE}"


def omitted(count: int, detail: str = "", first: int = -1, last: int = -1) -> str:
    """`… 1,204 lines omitted (lines 12–1215; Collecting ×40) …`; first/last are 0-based."""
    noun = "line" if count == 1 else "lines"
    extra = []
    if first >= 0:
        extra.append(f"lines {first + 1}–{last + 1}" if last > first else f"line {first + 1}")
    if detail:
        extra.append(detail)
    tail = f" ({'; '.join(extra)})" if extra else ""
    return marker(f"{count:,} {noun} omitted{tail}")


def is_marker_line(line: str) -> bool:
    core = line.strip()
    return len(core) >= 4 and core.startswith(MARKER_OPEN) and core.endswith(MARKER_CLOSE)


def cut_line(line: str, width: int) -> str:
    """Keep a prefix of `line` so that the result (tag included) is at most `width` chars."""
    if len(line) <= width:
        return line
    keep = width
    while keep > 0:
        tag = f" …[+{len(line) - keep:,} chars]"
        if keep + len(tag) <= width:
            return line[:keep] + tag
        keep = width - len(tag)
    return line[: max(0, width)]  # too narrow for a tag: a bare prefix is still a real excerpt


def strip_cut_tag(line: str) -> str:
    return CUT_TAG_RE.sub("", line)
