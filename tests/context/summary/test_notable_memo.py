"""The memo of whole-output scans (`filters.notable._found`): the arrival filter and the later
summary of the same rows scan one output once; the answers must not change."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.context.filters import notable
from myrm_tui.context.filters.notable import MEMO_ENTRIES, MIN_KEYED_LINES, notable_lines
from tests.hypothesis_profiles import examples


def request_log(lines: int, fact_at: int, tag: str = "eu-7") -> str:
    out = [f"INFO GET /items/{i} status=200 duration_ms={i % 97}" for i in range(lines)]
    out.insert(fact_at, f"WARN override applied queue_shard={tag}")
    return "\n".join(out)


@pytest.fixture(autouse=True)
def empty_memo():
    notable.clear_memo()
    yield
    notable.clear_memo()


def test_a_second_scan_of_the_same_output_is_a_hit_and_gives_the_same_lines(monkeypatch):
    text = request_log(200, 100)
    first = notable_lines(text, 3)
    assert len(notable._memo) == 1
    calls: list[str] = []

    def counting_keys(line: str) -> list[str]:
        calls.append(line)
        return []

    monkeypatch.setattr(notable, "_keys", counting_keys)
    # An equal string that is another object (the arrival filter joins the lines anew).
    again = notable_lines("\n".join(text.splitlines()), 3)
    assert again == first and not calls
    assert [n.text for n in first] == ["WARN override applied queue_shard=eu-7"]


def test_skip_head_and_tail_still_apply_to_a_remembered_scan():
    text = request_log(200, 100)
    notable_lines(text, 3)
    assert notable_lines(text, 3, skip_head=len(text) // 2 + 200) == []
    assert len(notable_lines(text, 3, skip_tail=len(text) // 4)) == 1


def test_a_different_output_misses_and_short_outputs_are_kept_too(monkeypatch):
    notable_lines(request_log(200, 100), 3)
    other = notable_lines(request_log(200, 100, tag="us-1"), 3)
    assert [n.text for n in other] == ["WARN override applied queue_shard=us-1"]
    assert len(notable._memo) == 2
    short = "a=1\nb=2\nplain"
    assert notable_lines(short, 3) == []  # below the keyed-line threshold: nothing, and remembered
    assert len(notable._memo) == 3
    calls: list[str] = []

    def counting_keys(line: str) -> list[str]:
        calls.append(line)
        return []

    monkeypatch.setattr(notable, "_keys", counting_keys)
    assert notable_lines(short, 3) == [] and not calls  # a compaction event's second scan is a hit


def test_the_memo_is_bounded_and_drops_the_least_recent():
    texts = [request_log(MIN_KEYED_LINES + 5, 3, tag=f"t{i}") for i in range(MEMO_ENTRIES + 2)]
    for text in texts:
        notable_lines(text, 1)
    notable_lines(texts[2], 1)  # used again: now the most recent
    notable_lines(request_log(MIN_KEYED_LINES + 5, 3, tag="new"), 1)
    assert len(notable._memo) == MEMO_ENTRIES
    assert texts[0] not in notable._memo and texts[1] not in notable._memo
    assert texts[2] in notable._memo and texts[3] not in notable._memo


def test_the_memo_is_bounded_in_characters_too(monkeypatch):
    monkeypatch.setattr(notable, "MEMO_CHARS", 25_000)
    texts = [request_log(200, 100, tag=f"c{i}") for i in range(4)]  # ~10,000 characters each
    for text in texts:
        notable_lines(text, 1)
    assert list(notable._memo) == texts[2:], "the oldest go first once the keys pass the cap"
    assert notable._memo_chars == sum(len(t) for t in texts[2:])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(["a=1", "b=2", "k=v x=1", '"id": 3', "WARN c=9", "", "plain"]), max_size=80))
def test_memo_answers_equal_a_fresh_scan(lines):
    text = "\n".join(lines)
    first = notable_lines(text, 4)
    remembered = notable_lines(text, 4)
    notable.clear_memo()
    assert first == remembered == notable_lines(text, 4)
