"""The per-text memos of `observations/fact_context.py` (names, line sets, call keys) make a
compaction event's FactContext cheaper, never different: a caller that changes what it got
back does not change what the next caller gets, and a remembered answer is the fresh one."""

from __future__ import annotations

from myrm_tui.context.observations import fact_context
from myrm_tui.context.observations.fact_context import changed_lines
from myrm_tui.context.observations.fact_index import _call_key, names_in


def test_a_caller_changing_its_names_does_not_change_the_next_answer():
    fact_context.clear_memos()
    text = "see the lease_window entry and relay-quorum-shim"
    first = names_in(text)
    assert first == {"lease_window", "relay-quorum-shim"}
    first.add("intruder_name")
    first.discard("lease_window")
    assert names_in(text) == {"lease_window", "relay-quorum-shim"}


def test_remembered_line_sets_and_call_keys_are_the_fresh_ones():
    fact_context.clear_memos()
    old = "a: 1\nb: 2\n2026-01-01T00:00:00Z c: 3"
    new = "a: 1\nb: 5\n2026-02-02T10:00:00Z c: 3"
    cold = changed_lines(new, old)
    assert cold == ["b: 5"]
    assert changed_lines(new, old) == cold  # warm
    assert changed_lines(old, new) == ["b: 2"]
    raw = '{"path": "x.py", "lines": "1:20"}'
    assert _call_key("file_read", raw) == _call_key("file_read", {"lines": "1:20", "path": "x.py"})
    assert _call_key("file_read", raw) == 'file_read{"lines": "1:20", "path": "x.py"}'
    assert _call_key("shell", None) == "shell{}"
