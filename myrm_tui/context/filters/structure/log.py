"""Application logs: level counts up front, every error (and the stack lines under it),
warnings as space allows, and the tail that shows how the run ended. The newest errors are
preferred when there are more than fit: they are the ones still relevant."""

from __future__ import annotations

import re
from collections import Counter

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.excerpt import Excerpt, Tier

_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|FATAL|SEVERE|PANIC)\b")
_ERRORISH = {"ERROR", "ERR", "CRITICAL", "FATAL", "SEVERE", "PANIC"}
_CONTINUATION = re.compile(r"^\s+(?:at |File \"|\.\.\.|\S)|^Traceback|^\w+(?:\.\w+)*(?:Error|Exception):")


def trim(text: str, lines: list[str]) -> Excerpt | None:
    ex = Excerpt("log")
    levels: Counter[str] = Counter()
    n = len(lines)
    current = None  # level of the last stamped line, for continuation lines
    for i, line in enumerate(lines):
        m = _LEVEL.search(line, 0, 120)
        from_end = n - i
        if m:
            level = m.group(1)
            level = {"WARN": "WARNING", "ERR": "ERROR"}.get(level, level)
            levels[level] += 1
            current = level
        elif not _CONTINUATION.match(line):
            current = None
        if current in _ERRORISH:
            ex.keep(line, Tier.IMPORTANT, rank=from_end, line=i)
        elif from_end <= C.LOG_TAIL_LINES:
            ex.keep(line, Tier.STRUCTURE, rank=from_end, line=i)  # how the run ended
        elif current == "WARNING":
            ex.keep(line, Tier.CONTEXT, rank=from_end, line=i)
        else:
            ex.keep(line, Tier.BULK, line=i)
    summary = ", ".join(f"{k} {v:,}" for k, v in levels.most_common())
    ex.note(f"log {n:,} lines; levels: {summary or 'none found'}", Tier.IMPORTANT)
    ex.pieces.insert(0, ex.pieces.pop())
    return ex
