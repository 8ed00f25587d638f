"""The prompt-prefix memo behind the per-request digests and encode-safe copies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.context.prefix_memo import PrefixMemo, shared_prefix


def counting_memo() -> tuple[PrefixMemo[str], list[dict]]:
    seen: list[dict] = []

    def compute(message: dict) -> str:
        seen.append(message)
        return str(message["content"]).upper()

    return PrefixMemo(compute), seen


def test_an_unchanged_prefix_is_not_computed_again_and_new_messages_are():
    memo, seen = counting_memo()
    a, b, c = {"content": "a"}, {"content": "b"}, {"content": "c"}
    assert memo.map([a, b]) == ["A", "B"]
    seen.clear()
    assert memo.map([a, b, c]) == ["A", "B", "C"]
    assert seen == [c]


def test_a_replaced_message_recomputes_from_there_on_even_when_equal():
    memo, seen = counting_memo()
    a, b, c = {"content": "a"}, {"content": "b"}, {"content": "c"}
    memo.map([a, b, c])
    seen.clear()
    b_copy = dict(b)  # equal, another object (a marker copy, a repaired result): not trusted
    assert memo.map([a, b_copy, c]) == ["A", "B", "C"]
    assert seen[0] is b_copy and seen[1] is c


def test_a_shorter_prompt_and_clear():
    memo, seen = counting_memo()
    a, b = {"content": "a"}, {"content": "b"}
    memo.map([a, b])
    seen.clear()
    assert memo.map([a]) == ["A"] and seen == []
    memo.clear()
    assert memo.map([a]) == ["A"] and seen == [a]


def test_the_returned_list_is_the_callers():
    memo, _ = counting_memo()
    a = {"content": "a"}
    out = memo.map([a])
    out.append("X")
    assert memo.map([a]) == ["A"]


@given(st.lists(st.lists(st.integers(0, 5), max_size=8), max_size=6))
def test_map_equals_computing_every_message(prompts):
    pool = [{"content": f"m{i}"} for i in range(6)]
    memo, _ = counting_memo()
    for prompt in prompts:
        messages = [pool[i] for i in prompt]
        assert memo.map(messages) == [m["content"].upper() for m in messages]


def test_shared_prefix_counts_identical_objects_only():
    a, b = {"x": 1}, {"x": 1}
    assert shared_prefix([a, b], [a, b, a]) == 2
    assert shared_prefix([a, dict(b)], [a, b]) == 1
    assert shared_prefix([], [a]) == 0
