"""Chunk choice: oldest first, outside tail and anchor, whole tool pairs, fits the summarizer."""

from __future__ import annotations

from myrm_tui.context.summary.chunking import Chunk, choose_chunk, chunk_cap, first_unit_tokens
from tests.context.summary.summary_helpers import assistant, call, rows_of, tool, user


def history():
    # 0 anchor user, 1 assistant(call a,b), 2 tool a, 3 tool b, 4 user, 5 assistant, 6 user,
    # 7 assistant(call c), 8 tool c, 9 user (tail)
    messages = [
        user("anchor"),
        assistant("", call("a", "bash", command="ls"), call("b", "bash", command="pwd")),
        tool("a", "x"),
        tool("b", "y"),
        user("q2"),
        assistant("a2"),
        user("q3"),
        assistant("", call("c", "file_read", path="f.py")),
        tool("c", "z"),
        user("latest"),
    ]
    return rows_of(messages, tokens=[100] * 10)


def test_takes_the_oldest_run_after_the_anchor_within_the_cap():
    rows = history()
    chunk = choose_chunk(rows, start=0, tail_start=9, anchor=0, summarizer_window=1000, overhead=200, target=200)
    # cap 600: unit [1..4) = 300, user 4 = 100, assistant 5 = 100, user 6 = 100 -> 600
    assert chunk == Chunk(1, 7, 600)


def test_never_splits_a_tool_call_from_its_results():
    rows = history()
    chunk = choose_chunk(rows, start=0, tail_start=9, anchor=0, summarizer_window=650, overhead=200, target=200)
    # cap 250: the first unit (assistant + 2 results = 300) does not fit -> nothing, never half of it
    assert chunk is None
    assert first_unit_tokens(rows, start=0, tail_start=9, anchor=0) == 300
    chunk = choose_chunk(rows, start=4, tail_start=9, anchor=0, summarizer_window=750, overhead=200, target=200)
    # cap 350: user 4, assistant 5, user 6 = 300; the next unit (7, 8) would make 500
    assert chunk == Chunk(4, 7, 300)


def test_stops_before_the_fresh_tail_even_mid_unit():
    rows = history()
    chunk = choose_chunk(rows, start=4, tail_start=8, anchor=0, summarizer_window=100_000)
    assert chunk == Chunk(4, 7, 300), "unit 7..9 crosses the tail start: excluded whole"


def test_never_starts_on_a_tool_result():
    rows = history()
    chunk = choose_chunk(rows, start=2, tail_start=9, anchor=0, summarizer_window=100_000)
    assert chunk is not None and chunk.start == 4


def test_anchor_in_the_middle_splits_the_candidates():
    rows = history()
    chunk = choose_chunk(rows, start=0, tail_start=9, anchor=4, summarizer_window=100_000)
    assert chunk == Chunk(0, 4, 400), "oldest contiguous run stops before the anchor"
    chunk = choose_chunk(rows, start=4, tail_start=9, anchor=4, summarizer_window=100_000)
    assert chunk == Chunk(5, 9, 400)


def test_oversized_history_against_a_small_summarizer_window():
    rows = rows_of([user("u" * 10)] * 40, tokens=[1_000] * 40)
    big = choose_chunk(rows, start=1, tail_start=36, anchor=0, summarizer_window=200_000)
    small = choose_chunk(rows, start=1, tail_start=36, anchor=0, summarizer_window=8_192)
    assert big is not None and small is not None
    assert big.tokens == 20_000, "capped by MAX_LEAF_CHUNK_TOKENS"
    cap = chunk_cap(8_192)
    assert small.tokens <= cap and small.tokens == (cap // 1_000) * 1_000
    assert small.start == 1 and small.end == 1 + small.tokens // 1_000


def test_nothing_to_do():
    rows = history()
    assert choose_chunk(rows, start=9, tail_start=9, anchor=0, summarizer_window=100_000) is None
    assert choose_chunk(rows, start=1, tail_start=9, anchor=0, summarizer_window=1_000) is None, "cap <= 0"
    assert first_unit_tokens(rows, start=9, tail_start=9, anchor=0) is None
