"""A long summary text counted line by line gives the tokenizer's count of the whole
(context/window/tokens.py, `count_text_tokens_by_line`): the budget, the stored node's tokens and
every later decision read that figure, so "cheaper" may not mean "about the same".

The pieces are cut only where no tokenizer chunk can run across; cutting after every newline
is not exact (a punctuation run takes the newlines after it, and o200k a "/" after those).
"""

from __future__ import annotations

import json
import uuid

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


def test_a_short_text_is_counted_whole_for_its_models_tokenizer() -> None:
    mixed = "Привет, мир! こんにちは世界 — naïve café 12345"  # counts differ between the two tokenizers
    assert whole(mixed, MODELS[0]) != whole(mixed, MODELS[1])
    for model in MODELS:
        assert count_text_tokens_by_line(mixed, model) == whole(mixed, model)
    assert count_text_tokens_by_line(mixed) == whole(mixed, "")  # no model: cl100k
    assert count_text_tokens_by_line("", MODELS[0]) == 0


def test_lines_are_remembered_apart_from_short_texts_and_an_overlong_line_is_not() -> None:
    line = "- a summary line that stays the same from leaf to fold, #%d\n"
    text = "".join(line % i for i in range(COUNT_CACHE_MAX_CHARS // 40))
    assert len(text) > COUNT_CACHE_MAX_CHARS
    count_text_tokens_by_line(text, MODELS[0])
    hits, short = tokens._count_line.cache_info().hits, tokens._count_short.cache_info().currsize
    assert count_text_tokens_by_line(text, MODELS[0]) == whole(text, MODELS[0])
    assert tokens._count_line.cache_info().hits >= hits + COUNT_CACHE_MAX_CHARS // 40  # every line again
    assert tokens._count_short.cache_info().currsize == short  # the short texts' cache untouched
    overlong = "word " * (COUNT_CACHE_MAX_CHARS // 5 + 1) + f"\nnext {uuid.uuid4().hex}\n"  # a line never counted
    size = tokens._count_line.cache_info().currsize
    assert count_text_tokens_by_line(overlong, MODELS[0]) == whole(overlong, MODELS[0])
    assert tokens._count_line.cache_info().currsize == size + 1  # the "next" line kept, the overlong one not
    exact = "y" * (COUNT_CACHE_MAX_CHARS - 1) + "\n"  # a line of exactly the cap is kept
    count_text_tokens_by_line(exact + "tail", MODELS[0])
    hits = tokens._count_line.cache_info().hits
    count_text_tokens_by_line(exact + "tail", MODELS[0])
    assert tokens._count_line.cache_info().hits == hits + 2


def test_a_message_costs_its_overhead_and_every_text_it_carries() -> None:
    # the summary area counts messages with the line count: the same figure as the whole count
    text = "\n".join(f"línea {i}: Привет こんにちは {'x' * 20}" for i in range(80))  # counts differ by tokenizer
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}  # counted as its JSON
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": "data:,"}},
            audio,
        ],
        "tool_calls": [{"id": "c1", "function": {"name": "grep", "arguments": '{"pattern": "x"}'}}],
        "reasoning_content": text,
        "tool_call_id": "c0",
    }
    assert whole(text, MODELS[0]) != whole(text, MODELS[1])
    for model in MODELS:
        expected = (
            tokens.MESSAGE_OVERHEAD_TOKENS
            + whole(text, model) * 2
            + tokens.IMAGE_TOKENS
            + whole(json.dumps(audio, ensure_ascii=False, sort_keys=True), model)
            + whole("grep", model)
            + whole('{"pattern": "x"}', model)
            + 3
            + 2
        )
        assert tokens.count_message_tokens(message, model) == expected
        assert tokens.count_message_tokens(message, model, count_text_tokens_by_line) == expected


def test_a_tokenizer_the_cut_was_not_checked_for_is_counted_whole(monkeypatch) -> None:
    monkeypatch.setattr(tokens, "_LINE_EXACT_ENCODINGS", frozenset())
    text = "".join(f"line {i} {uuid.uuid4().hex}\n" for i in range(COUNT_CACHE_MAX_CHARS // 30))
    size = tokens._count_line.cache_info().currsize
    assert count_text_tokens_by_line(text, MODELS[0]) == whole(text, MODELS[0])
    assert tokens._count_line.cache_info().currsize == size  # no line counted apart
