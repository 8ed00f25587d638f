"""ls / find / fd / tree.

A listing is read for its shape: which directories, how many entries, a few names each.
Entries are grouped by directory; every directory shows its first entries before any
directory shows many (rank = position inside the directory), and a count line says how much
each big directory holds.
"""

from __future__ import annotations

import re
from collections import Counter

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.detect import Command
from myrm_tui.context.filters.excerpt import Excerpt, Tier

_LS_TOTAL = re.compile(r"^total \d+")
_LS_HEADER = re.compile(r"^\S.*:$")
_TREE = re.compile(r"^((?:[│|]   |    )*)(?:├── |└── |\|-- |`-- )")
_TREE_FINAL = re.compile(r"^\d+ director(?:y|ies)(?:, \d+ files?)?$")


def compress(lines: list[str], cmd: Command) -> Excerpt | None:
    if not lines:
        return None
    if cmd.tool == "tree" or sum(1 for ln in lines[:50] if _TREE.match(ln)) >= 3:
        return _tree(lines)
    if cmd.tool == "ls":
        return _ls(lines)
    return _paths(lines)


def _ls(lines: list[str]) -> Excerpt:
    ex = Excerpt("ls")
    index = 0
    sizes: list[tuple[str, int]] = []
    for i, line in enumerate(lines):
        if _LS_TOTAL.match(line) or not line.strip():
            continue
        if _LS_HEADER.match(line) and (i == 0 or not lines[i - 1].strip()):
            index = 0
            sizes.append((line[:-1], 0))
            ex.keep(line, Tier.STRUCTURE, line=i)
            continue
        index += 1
        if sizes:
            sizes[-1] = (sizes[-1][0], index)
        ex.keep(line, Tier.CONTEXT if index <= C.LISTING_PER_DIR else Tier.BULK, rank=index, line=i)
    entries = sum(n for _, n in sizes) if sizes else index
    big = sorted(sizes, key=lambda s: -s[1])[:5]
    detail = "; largest: " + ", ".join(f"{d} ({n:,})" for d, n in big) if len(sizes) > 1 else ""
    ex.note(f"{entries:,} entries in {max(1, len(sizes)):,} directories{detail}", Tier.IMPORTANT, rank=0)
    ex.pieces.insert(0, ex.pieces.pop())
    return ex


def _paths(lines: list[str]) -> Excerpt:
    ex = Excerpt("find")
    per_dir: Counter[str] = Counter()
    for i, line in enumerate(lines):
        path = line.strip()
        if not path:
            continue
        parent = path.rsplit("/", 1)[0] if "/" in path else "."
        per_dir[parent] += 1
        n = per_dir[parent]
        tier = (
            Tier.IMPORTANT
            if re.search(r"Permission denied|No such file", line)
            else (Tier.CONTEXT if n <= C.LISTING_PER_DIR else Tier.BULK)
        )
        ex.keep(line, tier, rank=n + path.count("/") * 0.01, line=i)
    big = ", ".join(f"{d}/ ({n:,})" for d, n in per_dir.most_common(5))
    ex.note(f"{sum(per_dir.values()):,} paths in {len(per_dir):,} directories; largest: {big}", Tier.IMPORTANT)
    ex.pieces.insert(0, ex.pieces.pop())
    return ex


def _tree(lines: list[str]) -> Excerpt:
    ex = Excerpt("tree")
    counters: list[int] = []  # sibling index per depth
    for i, line in enumerate(lines):
        m = _TREE.match(line)
        if _TREE_FINAL.match(line.strip()):
            ex.keep(line, Tier.IMPORTANT, line=i)
        elif m:
            depth = len(m.group(1)) // 4
            del counters[depth + 1 :]
            while len(counters) <= depth:
                counters.append(0)
            counters[depth] += 1
            tier = Tier.CONTEXT if counters[depth] <= C.LISTING_PER_DIR and depth < 2 else Tier.BULK
            ex.keep(line, tier, rank=counters[depth] + depth * 2, line=i)
        else:
            ex.keep(line, Tier.STRUCTURE, line=i)
    return ex
