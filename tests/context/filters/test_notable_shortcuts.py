"""The notable-line scan's shortcuts decide exactly what the full tests decide.

Why: the scan runs over every long output on arrival, inside the request (benchmark B1), so its
regexes sit behind substring tests and its token kinds behind one search. A shortcut that
disagreed with the rule it stands for would silently change which lines an excerpt and a
summary keep; these properties pin each to the plain definition.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import example, given
from hypothesis import strategies as st

from myrm_tui.context.filters import notable

# Text that reaches the interesting cases often: the substrings, word boundaries, non-ASCII.
_PIECES = st.sampled_from(
    ["Error:", "Exception", "Failure", "error:", "Value", ":", " ", "\t", ",", "|", ";", "é", "٣", "x1"]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map("".join)


def _kind_by_definition(token: str) -> str:
    """A word ("a") when it has a letter, a number ("9") when it has digits only, else its
    first characters (punctuation), character by character."""
    if token.isalnum() and not token.isnumeric():
        return "a"
    if not any(ch.isalnum() for ch in token):
        return token[:3]
    return "a" if any(ch.isalpha() for ch in token) else "9"


@given(_TEXT)
@example("KeyError: 'x'")
@example("notError: x")
@example("SomeFailure: x")
def test_an_exception_is_found_exactly_where_the_pattern_finds_one(text):
    assert notable._raises(text) == (notable._EXCEPTION.search(text) is not None)


@given(st.text(max_size=12))
@example("2025-03-14T10:00:05.227Z")
@example("[4/384]")
@example("½")
def test_a_tokens_kind_is_its_definition(token):
    assert notable._Kinds()[token] == _kind_by_definition(token)


def _delimiter_by_definition(body: list[str]) -> str | None:
    """The first delimiter that occurs the same number of times (at least twice) in
    DELIMITED_SHARE of the lines, counted line by line."""
    for delimiter in notable.DELIMITERS:
        count, lines = Counter(line.count(delimiter) for line in body).most_common(1)[0]
        if count >= 2 and lines >= notable.DELIMITED_SHARE * len(body):
            return delimiter
    return None


@given(st.lists(_TEXT, min_size=1, max_size=40))
@example(["a,b,c"] * 4 + ["header"])
@example(["a\tb\tc", "\t\t", "d\te\tf"])
def test_the_delimiter_shortcut_never_changes_the_delimiter(lines):
    text = "\n".join(lines)
    body = [line for line in lines if line.strip()]
    if body:
        assert notable._delimiter(body, text) == _delimiter_by_definition(body)
