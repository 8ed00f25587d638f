"""XML and HTML: a count of tags (what kind of document this is), the title and headings,
and an indentation outline when the document is pretty-printed. A minified document has no
lines to outline; it gets the counts plus the generic head/tail of its text."""

from __future__ import annotations

import re
from collections import Counter

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.excerpt import Excerpt, Tier
from myrm_tui.context.filters.structure.data import outline

_TAG = re.compile(r"<([A-Za-z][\w:.-]{0,60})")
_HEADING = re.compile(r"<(?:title|h[1-3])\b", re.IGNORECASE)


def trim(text: str, lines: list[str]) -> Excerpt | None:
    kind = "html" if re.search(r"<html|<!doctype html|<body|<div", text[:4096], re.IGNORECASE) else "xml"
    tags = Counter(t.lower() if kind == "html" else t for t in _TAG.findall(text))
    top = ", ".join(f"{t} ×{n:,}" for t, n in tags.most_common(C.MARKUP_TOP_TAGS))
    if len(lines) >= 10:
        ex = outline(lines, kind, max_depth=C.TREE_MAX_DEPTH + 2, promote=_HEADING)
    else:
        ex = Excerpt(kind)
        for i, line in enumerate(lines):
            ex.keep(line, Tier.BULK, line=i)
    for piece in ex.pieces:
        if not piece.is_marker and _HEADING.search(piece.text):
            piece.tier, piece.key = Tier.IMPORTANT, True
    ex.note(f"{kind.upper()} {sum(tags.values()):,} tags: {top}", Tier.IMPORTANT)
    ex.pieces.insert(0, ex.pieces.pop())
    return ex
