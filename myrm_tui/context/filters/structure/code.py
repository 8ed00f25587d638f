"""Source code by shape: the symbol outline (classes, functions, types — top level first),
imports summarised, and omission markers that carry line ranges, so the reader can recall
`lines 120–180` of the function they need."""

from __future__ import annotations

import re

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.excerpt import Dropper, Excerpt, Tier

_SYMBOL = re.compile(
    r"^\s*(?:@\w|(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:unsafe\s+)?"
    r"(?:def|class|function|fn|func|interface|struct|enum|trait|impl|type|module|namespace|object|"
    r"protocol|extension|record)\s)"
    r"|^\s*(?:public|private|protected|internal|static|final|abstract|override|virtual)\s[^=;]*\("
)
_IMPORT = re.compile(
    r"^\s*(?:import\s|from\s+\S+\s+import\s|#include\s|use\s+[\w:{]|require\(|"
    r"(?:const|let|var)\s+\S+\s*=\s*require\(|package\s|using\s+[\w.]+;)"
)


def trim(text: str, lines: list[str]) -> Excerpt | None:
    ex = Excerpt("code")
    drop = Dropper(ex, Tier.BULK)
    imports = symbols = 0
    for i, line in enumerate(lines):
        if _IMPORT.match(line):
            imports += 1
            if imports <= C.CODE_MAX_IMPORTS:
                drop.keep(line, Tier.CONTEXT, i, rank=imports)
            else:
                drop.drop(i, "imports")
        elif _SYMBOL.match(line):
            symbols += 1
            depth = (len(line) - len(line.lstrip())) // 2
            drop.keep(line, Tier.STRUCTURE, i, rank=depth * 100_000 + i)
        else:
            drop.keep(line, Tier.BULK, i)
    drop.flush()
    ex.note(
        f"code {len(lines):,} lines, {symbols:,} symbols, {imports:,} imports (outline; ranges in markers)",
        Tier.IMPORTANT,
    )
    ex.pieces.insert(0, ex.pieces.pop())
    return ex
