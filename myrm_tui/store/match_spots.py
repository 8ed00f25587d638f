"""Where in a text a query matches best: the spot a snippet or a listed line should show.

Why not the first match: an output names a key on the lines of the test (or file, or section)
that carries it long before the line that holds its value (`test_<key>_matches` in a pytest
header, then `assert SETTINGS["<key>"] == "…"`), and a document uses each word of a two-word
query on its own before the one sentence where they stand together. The best spot is the one
covering the most distinct query terms, then the one where the match is a whole token (not
the middle of a longer identifier), then the earliest: deterministic, and pure text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Occurrences of one needle looked at per text: a word on every line of a 200 KB log must not
# make each snippet cost tens of milliseconds (ten hits: ~2 ms each at 200, ~10 ms at 1,000),
# and the lines that name a key are seldom that many before the one holding its value.
SCAN_MATCHES_PER_NEEDLE = 200


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def token_bounded(text: str, start: int, end: int) -> int:
    """0-2: how many ends of `text[start:end]` are token ends. An end counts when the match's
    character there is not a word character (`-` in `x-y`), or the neighbour outside is not one
    (`"key"`, start or end of text). `key` in `test_key_ok` scores 0, in `cfg["key"]` 2."""
    if start >= end:
        return 0
    left = start == 0 or not _is_word(text[start]) or not _is_word(text[start - 1])
    right = end >= len(text) or not _is_word(text[end - 1]) or not _is_word(text[end])
    return int(left) + int(right)


def _bounded_best(line: str, needle: str) -> int:
    """The best `token_bounded` score of `needle` (casefolded) in `line` (casefolded)."""
    best = 0
    at = line.find(needle) if needle else -1
    for _ in range(SCAN_MATCHES_PER_NEEDLE):
        if at < 0 or best == 2:
            break
        best = max(best, token_bounded(line, at, at + len(needle)))
        at = line.find(needle, at + 1)
    return best


def best_spot(text: str, needles: Sequence[str], terms: Sequence[str], reach: int) -> tuple[int, int] | None:
    """(start, end) of the best case-insensitive occurrence of any needle, None if none occurs.

    `reach`: characters on each side of an occurrence that count as shown with it (a snippet's
    context), where the distinct `terms` are counted. Ranking: most terms covered, then the more
    token-bounded match, then the earlier needle (callers list the whole phrase first), then the
    earlier position. The scan stops at the first spot nothing can beat (every term the text
    holds, a whole token, of the first needle that occurs): the common case costs one match."""
    folded = text.casefold()
    present = [term for term in dict.fromkeys(t.casefold() for t in terms if t) if term in folded]
    top = (len(present), 2)
    best: tuple[tuple[int, int, int, int], tuple[int, int]] | None = None
    seen: set[str] = set()
    for rank, needle in enumerate(needles):
        if not needle or needle.casefold() in seen:
            continue
        seen.add(needle.casefold())
        pattern = re.compile(re.escape(needle), re.IGNORECASE)
        for count, found in enumerate(pattern.finditer(text)):
            if count >= SCAN_MATCHES_PER_NEEDLE:
                break
            start, end = found.span()
            covered = 0
            if present:
                window = text[max(0, start - reach) : end + reach].casefold()
                covered = sum(1 for term in present if term in window)
            key = (covered, token_bounded(text, start, end), -rank, -start)
            if best is None or key > best[0]:
                best = (key, (start, end))
            if key[:2] == top:
                return best[1]
    return None if best is None else best[1]


def line_order(lines: Sequence[str], numbers: Sequence[int], query: str) -> list[int]:
    """`numbers` (1-based lines of `lines` that match `query`) best first: the lines holding the
    most distinct words of the query, then those where the whole query is a whole token, then
    those where a word of it is, then document order."""
    words = list(dict.fromkeys(w.casefold() for w in re.findall(r"\w+", query)))
    literal = " ".join(query.split()).casefold()

    def key(number: int) -> tuple[int, int, int, int]:
        folded = lines[number - 1].casefold()
        covered = sum(1 for w in words if w in folded)
        whole = _bounded_best(folded, literal)
        word = max((_bounded_best(folded, w) for w in words), default=0)
        return (-covered, -whole, -word, number)

    return sorted(numbers, key=key)
