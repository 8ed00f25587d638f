"""grep / rg / git grep / ag.

Matches are grouped by file: a count line names the files with the most matches, and every
file shows its first matches before any file shows many. Output without file prefixes (a
single-file grep) is kept as head and tail.
"""

from __future__ import annotations

import re
from collections import Counter

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Excerpt, Tier

# `path:12:text`, `path-12-text` (context), `path:text`; paths have no spaces before the colon
# in the common case, and a line number makes it unambiguous.
_PREFIXED = re.compile(r"^(?P<file>[^\s:][^:\n]{0,400}?)(?::(?P<ln>\d+)[:-]|-(?P<ctx>\d+)-|:(?=\S))")
_RG_LINE = re.compile(r"^(\d+)[:-]")


def compress(lines: list[str], cmd: Command) -> Excerpt | None:
    if not lines:
        return None
    sample = [ln for ln in lines[:200] if ln.strip()]
    numbered = sum(1 for ln in sample if (m := _PREFIXED.match(ln)) and (m.group("ln") or m.group("ctx")))
    heading = sum(1 for ln in sample if _RG_LINE.match(ln))
    ex = Excerpt("grep")
    counts: Counter[str] = Counter()
    if sample and numbered * 2 >= len(sample):
        for i, line in enumerate(lines):
            m = _PREFIXED.match(line)
            name = m.group("file") if m else ""
            if line.strip() == "--":
                continue
            counts[name] += 1
            n = counts[name]
            ex.keep(line, Tier.CONTEXT if n <= C.GREP_PER_FILE else Tier.BULK, rank=n, line=i)
    elif sample and heading * 2 >= len(sample):
        name = ""
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            if not _RG_LINE.match(line):
                name = line
                ex.keep(line, Tier.STRUCTURE, line=i)
                continue
            counts[name] += 1
            n = counts[name]
            ex.keep(line, Tier.CONTEXT if n <= C.GREP_PER_FILE else Tier.BULK, rank=n, line=i)
    else:
        return None  # plain lines: head and tail does as well as anything
    top = ", ".join(f"{f} ({n:,})" for f, n in counts.most_common(8))
    ex.note(f"{sum(counts.values()):,} matches in {len(counts):,} files; most: {top}", Tier.IMPORTANT)
    ex.pieces.insert(0, ex.pieces.pop())
    return ex
