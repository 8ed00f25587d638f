"""`myrm undo` without --session undoes the latest session that has file changes to undo, and
says which one it chose (before: it took the latest session even when that one only talked,
and said "no file changes left to undo")."""

from __future__ import annotations


def test_undo_skips_a_later_session_that_changed_nothing_and_says_which_it_chose(myrm, script, workspace):
    (workspace / "app.py").write_text("print('hello')\n")
    edit = {"id": "c1", "name": "file_edit", "arguments": {"path": "app.py", "old": "hello", "new": "bye"}}
    editing = script({"tool_calls": [edit]}, {"text": "Done."})
    assert myrm("run", "--approve", "auto-edit", "--model", editing, "change it").returncode == 0
    talking = script({"text": "Just an answer."})
    assert myrm("run", "--model", talking, "a question").returncode == 0  # a newer session, no changes
    result = myrm("undo", "--yes", input="")
    assert result.returncode == 0, result.stderr
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    assert "has no file changes to undo" in result.stderr and "using session" in result.stderr
