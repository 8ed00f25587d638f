"""Line numbers in a TOML file, for problems that say where: tomllib reports no positions.

Why best effort is enough: the line is a pointer for the user; a key the pattern misses (an odd
spelling, a dotted key) is reported without one rather than not at all.
"""

from __future__ import annotations

import re


def error_line(message: str) -> int | None:
    """tomllib puts the position in the text: '... (at line 3, column 7)'."""
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else None


class Locator:
    """Best-effort line numbers for keys and tables (tomllib does not report positions)."""

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def key(self, key: str, after: int | None = None) -> int | None:
        pattern = re.compile(r"^\s*(" + re.escape(key) + r"|[\"']" + re.escape(key) + r"[\"'])\s*=")
        return self._find(pattern, after)

    def table(self, *names: str) -> int | None:
        parts = [r"\s*(" + re.escape(n) + r"|[\"']" + re.escape(n) + r"[\"'])\s*" for n in names]
        pattern = re.compile(r"^\s*\[" + r"\.".join(parts) + r"\]")
        return self._find(pattern, None)

    def _find(self, pattern: re.Pattern[str], after: int | None) -> int | None:
        start = after or 0
        for index in range(start, len(self.lines)):
            if pattern.match(self.lines[index]):
                return index + 1
        return None
