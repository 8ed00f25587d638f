"""`myrm undo` end to end: a real `myrm run` changes files through tools, then the real entry
point restores them (stdin is not a terminal here, so no question is asked)."""

from __future__ import annotations


def _run_changes(myrm, script, workspace):
    (workspace / "app.py").write_text("print('hello')\n")
    model = script(
        {
            "tool_calls": [
                {"id": "c1", "name": "file_edit", "arguments": {"path": "app.py", "old": "hello", "new": "bye"}},
                {"id": "c2", "name": "file_write", "arguments": {"path": "new.txt", "content": "fresh\n"}},
            ]
        },
        {"text": "Done."},
    )
    result = myrm("run", "--approve", "auto-edit", "--model", model, "change things")
    assert result.returncode == 0, result.stderr
    assert (workspace / "app.py").read_text() == "print('bye')\n"


def test_undo_without_a_terminal_previews_then_restores(myrm, script, workspace):
    _run_changes(myrm, script, workspace)
    result = myrm("undo", input="")
    assert result.returncode == 0, result.stderr
    assert "restore app.py" in result.stdout and "delete new.txt" in result.stdout
    assert "-print('bye')" in result.stdout and "+print('hello')" in result.stdout
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    assert not (workspace / "new.txt").exists()
    again = myrm("undo", "--yes", input="")
    assert again.returncode == 0 and "no file changes left to undo" in again.stderr


def test_undo_refuses_to_clobber_a_later_edit_unless_forced(myrm, script, workspace):
    _run_changes(myrm, script, workspace)
    (workspace / "app.py").write_text("print('bye')  # mine\n")
    refused = myrm("undo", "--yes", input="")
    assert refused.returncode == 1
    assert "changed since the turn wrote them: app.py" in refused.stderr and "--force" in refused.stderr
    assert (workspace / "app.py").read_text() == "print('bye')  # mine\n"
    assert (workspace / "new.txt").exists()  # nothing was touched
    forced = myrm("undo", "--yes", "--force", input="")
    assert forced.returncode == 0, forced.stderr
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    assert not (workspace / "new.txt").exists()
