"""Fuzzy matching for the slash popup, @file completion and pickers (pure, no Textual).

A subsequence match scored so that what people type first ranks first: a prefix beats a word
start, which beats letters scattered through the candidate; shorter candidates win ties.
"""

from __future__ import annotations

from collections.abc import Iterable

_SEPARATORS = frozenset("/_-. ")


def fuzzy_score(query: str, candidate: str) -> int | None:
    """Higher is better; None when `query` is not a (case-insensitive) subsequence."""
    if not query:
        return 0
    q, c = query.lower(), candidate.lower()
    if c.startswith(q):
        return 10_000 - len(c)
    position = c.find(q)
    if position >= 0:
        boundary = position == 0 or c[position - 1] in _SEPARATORS
        return (8_000 if boundary else 6_000) - position - len(c)
    score, start, previous = 0, 0, -2
    for ch in q:
        index = c.find(ch, start)
        if index < 0:
            return None
        if index == previous + 1:
            score += 5  # consecutive letters
        if index == 0 or c[index - 1] in _SEPARATORS:
            score += 10  # the start of a word or path part
        previous, start = index, index + 1
    return score * 10 - len(c)


def fuzzy_filter(query: str, candidates: Iterable[str], limit: int | None = None) -> list[str]:
    """Candidates that match `query`, best first (stable for equal scores)."""
    scored = []
    for order, candidate in enumerate(candidates):
        score = fuzzy_score(query, candidate)
        if score is not None:
            scored.append((-score, order, candidate))
    scored.sort()
    hits = [candidate for _, _, candidate in scored]
    return hits if limit is None else hits[:limit]
