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
@example("三")  # a letter and a number at once (CJK numerals): a word
@example("1一")
@example("42")
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


_LINE = st.one_of(_TEXT, st.lists(_PIECES, max_size=4).map(" ".join))


@given(st.lists(_LINE, max_size=30), st.integers(min_value=0, max_value=3))
@example(["KeyError: x", "", "ValueError: y", "ok", "OSError: z"], 1)
@example(["a ValueError: b KeyError: c", "TypeError: d"], 0)
@example(["ok", "KeyError: x", "ValueError: y", "OSError: z"], 3)
@example(["\nExceptionError:"], 0)  # a generated piece holding a newline: the text's lines are what count
def test_raising_lines_are_the_lines_the_pattern_finds_one_in(lines, most):
    text = "\n".join(lines)
    by_definition = [i for i, line in enumerate(text.split("\n")) if notable._EXCEPTION.search(line)]
    assert notable._raising_lines(text, most) == by_definition[: most + 1]


# Few distinct tokens, so lines share shapes and a group reaches MIN_KEYED_LINES.
_CELL = st.sampled_from(["INFO", "WARN", "200", "404", "é", "٣", "三", "---", "----", "x1", "|", "ok", "GET", "7"])
_ROW = st.lists(_CELL, min_size=0, max_size=6).map(" ".join)


def _rare_by_definition(members: list[int], tokens: dict[int, list[str]], kinds: notable._Kinds) -> set[int]:
    """Column by column, each member's own token kind is tested (no shortcut through the shape)."""
    out: set[int] = set()
    for column in range(notable.COLUMNS):
        cells = [(i, tokens[i][column]) for i in members if len(tokens[i]) > column]
        cells = [(i, v) for i, v in cells if kinds[v] in ("a", "9")]
        values = Counter(v for _, v in cells)
        common = sum(n for n in values.values() if n >= notable.COMMON_COUNT)
        rare = {v for v, n in values.items() if n <= notable.RARE_COUNT}
        if rare and len(rare) <= notable.MAX_RARE_VALUES and common >= notable.COMMON_SHARE * len(cells):
            out.update(i for i, v in cells if v in rare)
    return out


@given(st.lists(_ROW, min_size=notable.MIN_KEYED_LINES, max_size=80))
@example(["GET 200 ok"] * 24 + ["GET 404 ok"])
@example(["INFO x1 7 200"] * 22 + ["INFO x1 7 404", "INFO x1 7"])
@example(["GET --- ok"] * 24 + ["GET ---- ok"])  # one punctuation kind, two values: not a rare word
def test_rare_values_by_shape_are_rare_values_by_each_cell(lines):
    tokens = {i: line.split(None, notable.COLUMNS)[: notable.COLUMNS] for i, line in enumerate(lines)}
    kinds = notable._Kinds()
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, cells in tokens.items():
        groups.setdefault(tuple(kinds[t] for t in cells[: notable.SHAPE_TOKENS]), []).append(i)
    for shape, members in groups.items():
        found = set(notable._rare_in_columns(shape, members, tokens, kinds))
        assert found == _rare_by_definition(members, tokens, kinds)
