"""Markdown: the heading outline (top levels first) with the first lines of each section,
so the reader sees what the document covers and where to recall from."""

from __future__ import annotations

import re

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.excerpt import Excerpt, Tier

_HEADING = re.compile(r"^(#{1,6})\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")


def trim(text: str, lines: list[str]) -> Excerpt | None:
    ex = Excerpt("markdown")
    in_fence = False
    since_heading = 0
    headings = 0
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            headings += 1
            since_heading = 0
            ex.keep(line, Tier.STRUCTURE, rank=len(m.group(1)) * 100_000 + i, line=i)
            continue
        if line.strip():
            since_heading += 1
        if line.strip() and since_heading <= C.MARKDOWN_SECTION_LINES:
            ex.keep(line, Tier.CONTEXT, rank=since_heading * 100_000 + i, line=i)
        else:
            ex.keep(line, Tier.BULK, line=i)
    ex.note(
        f"Markdown {len(lines):,} lines, {headings:,} headings (outline and first lines of sections)", Tier.IMPORTANT
    )
    ex.pieces.insert(0, ex.pieces.pop())
    return ex
