"""A long summary text counted line by line gives the tokenizer's count of the whole
(context/window/tokens.py, `count_text_tokens_by_line`): the budget, the stored node's tokens and
every later decision read that figure, so "cheaper" may not mean "about the same".

The pieces are cut only where no tokenizer chunk can run across; cutting after every newline
is not exact (a punctuation run takes the newlines after it, and o200k a "/" after those).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.window import tokens
from myrm_tui.context.window.tokens import COUNT_CACHE_MAX_CHARS, count_text_tokens_by_line

# Models of both tokenizers counted with (`encoding_name_for`).
MODELS = ("openai/gpt-4o", "anthropic/claude-sonnet-4")

# What starts and ends lines in summaries and tool outputs, and what tokenizers split on:
# letters of several scripts, digits, punctuation runs, "/", spaces and tabs, each newline
# style, a combining mark, Unicode spaces and separators, a special token's text, contractions.
PIECES = (
    "a", "Z", "é", "ß", "中", "文", "1", "23", "4567", "-", "*", "/", "//", "#", "`", "'s", "'S",
    " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", ".", ",", ":", "(", ")", "\u0301", "\u00a0",
    "\u2028", "\x1c", "\x85", "😀", "<|endoftext|>", "ab'll", "Üx", "\u200b", "ǅ", "ʰ", "۵", "Ⅻ",
    "- item", "  - nested", "path/to/file.py", "Traceback (most recent call last):",
)  # fmt: skip


def whole(text: str, model: str) -> int:
    name = tokens.encoding_name_for(model)
    return len(tokens._encoder(name).encode(text, disallowed_special=()))


def long_text(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.lists(st.sampled_from(PIECES), max_size=30).map("".join), min_size=1, max_size=40))
    text = "\n".join(lines)
    while len(text) <= COUNT_CACHE_MAX_CHARS:  # the line-by-line path (shorter texts are counted whole)
        text += "\n" + text
    return text


@pytest.mark.parametrize("model", MODELS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_long_text_counted_line_by_line_gives_the_whole_count(model: str, data: st.DataObject) -> None:
    text = data.draw(st.composite(long_text)())
    assert count_text_tokens_by_line(text, model) == whole(text, model)


@pytest.mark.parametrize("model", MODELS)
def test_a_summary_shaped_text_gives_the_whole_count(model: str) -> None:
    # the lines a node renders: a header, field lines, punctuation at line ends, paths at line starts
    lines = [
        "<summary S12 depth 1 covers 40 messages>",
        "Completed actions:",
        *(f"- ran `pytest tests/test_{i}.py` -> 3 failed, 1 error.\n/usr/lib/python3 path {i}:" for i in range(120)),
        "Next steps:\n\n  - fix the retry loop; then re-run.",
        "</summary>",
    ]
    text = "\n".join(lines)
    assert len(text) > COUNT_CACHE_MAX_CHARS
    assert count_text_tokens_by_line(text, model) == whole(text, model)
