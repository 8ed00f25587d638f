"""The fallback: head and tail, plus every line that names an error, failure, exception or
warning (with one line of context each side), wherever it is in the middle."""

from __future__ import annotations

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.excerpt import Excerpt, Tier
from myrm_tui.context.filters.patterns import IMPORTANT, WARNING


def head_tail(lines: list[str], kind: str = "head-tail") -> Excerpt:
    ex = Excerpt(kind)
    tiers = bytearray(len(lines))
    for i, line in enumerate(lines):
        probe = line[:2000]  # a megabyte-long line is searched by its start only
        if IMPORTANT.search(probe):
            tiers[i] = Tier.IMPORTANT
        elif WARNING.search(probe):
            tiers[i] = max(tiers[i], Tier.STRUCTURE)
        else:
            continue
        for j in range(max(0, i - C.IMPORTANT_CONTEXT), min(len(lines), i + C.IMPORTANT_CONTEXT + 1)):
            tiers[j] = max(tiers[j], Tier.CONTEXT)
    n = len(lines)
    for i, line in enumerate(lines):
        if i < C.GENERIC_HEAD_PIN or i >= n - C.GENERIC_TAIL_PIN:
            ex.keep(line, Tier.PINNED, line=i, key=tiers[i] == Tier.IMPORTANT)
        else:
            ex.keep(line, tiers[i], line=i)
    return ex
