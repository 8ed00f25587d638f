"""How a typed model name is matched against known names when it is not exactly one of them.

Why fuzzy at all: people type `gpt4o`, `claude-sonet-4-5` or `Sonnet 4.5`; an exact substring
search finds nothing for those, and "no model matches" sends them guessing. Names are compared
on their letters and digits only (so punctuation and case never decide a match), and a name
close to the typed one by edit distance counts as a near miss. Pure: no registry, no litellm.
"""

from __future__ import annotations

import difflib
import re

# How alike (difflib's ratio, 0..1) a name must be to the typed one to be offered as "did you
# mean": 0.75 accepts one or two wrong, missing or swapped characters in a 10-character name
# ("claude-sonet-4-5" for "claude-sonnet-4-5") and rejects names that only share a family prefix.
CLOSE_RATIO = 0.75
# Typed text shorter than this is too little to call a near miss ("gp" is close to everything).
CLOSE_MIN_CHARS = 4

# Match quality, best first: the typed text is in the name as typed; it is there once both are
# reduced to letters and digits; the name is a near miss of it.
SUBSTRING, LOOSE, CLOSE = 0, 1, 2

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def loose(text: str) -> str:
    """`text` reduced to lower-case letters and digits: "GPT-4o" and "gpt4o" read the same."""
    return _NOT_ALNUM.sub("", text.lower())


def last_part(name: str) -> str:
    """The model part of a provider-prefixed name ("openai/gpt-4o" -> "gpt-4o")."""
    return name.rsplit("/", 1)[-1]


def match_quality(query: str, name: str, *, near_misses: bool = True) -> int | None:
    """How well `name` matches the typed `query` (SUBSTRING, LOOSE, CLOSE), or None for no match.
    An empty query matches everything as a substring. `near_misses=False` skips the CLOSE test
    (an edit-distance comparison: a search over thousands of names tries it only when nothing
    matched otherwise)."""
    needle = query.strip().lower()
    if needle in name.lower():
        return SUBSTRING
    reduced = loose(needle)
    if reduced and reduced in loose(name):
        return LOOSE
    if near_misses and len(reduced) >= CLOSE_MIN_CHARS and _close(reduced, name):
        return CLOSE
    return None


def plausible(query: str, name: str) -> bool:
    """Whether `name` is a believable "did you mean" for `query`: a short fragment such as "bar"
    is inside many unrelated names ("capybara"), so the name may be at most about twice as long."""
    typed, offered = loose(last_part(query)), loose(last_part(name))
    return len(typed) >= CLOSE_MIN_CHARS and len(offered) <= 2 * len(typed) + 2


def closeness(query: str, name: str) -> float:
    """How alike the typed text and a name are (0..1), on letters and digits, against the whole
    name or its model part, whichever is closer."""
    reduced = loose(query)
    return max((_ratio(reduced, loose(c)) for c in {name, last_part(name)}), default=0.0)


def _ratio(reduced: str, candidate: str) -> float:
    if not (reduced and candidate):
        return 0.0
    # The typed text is the matcher's indexed side (it is short), and the two cheap upper bounds
    # reject most of the thousands of names before the full comparison runs.
    matcher = difflib.SequenceMatcher(None, candidate, reduced, autojunk=False)
    if matcher.real_quick_ratio() < CLOSE_RATIO or matcher.quick_ratio() < CLOSE_RATIO:
        return 0.0
    return matcher.ratio()


def _close(reduced: str, name: str) -> bool:
    """A near miss of the whole name or of its model part (the typed text often omits the provider)."""
    return closeness(reduced, name) >= CLOSE_RATIO
