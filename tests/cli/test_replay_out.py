"""`myrm replay --out`: the output file is written through its folder's handle, never a link."""

from __future__ import annotations

import json
from pathlib import Path

from tests.context.test_replay import session_lines


def test_replay_out_never_writes_through_a_link(tmp_path: Path, myrm) -> None:
    """`--out` is opened through its folder's handle: a link put where the output goes (by a
    command of the session, say) is refused and its target left alone."""
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in session_lines()[:3]))
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    link = tmp_path / "out.jsonl"
    link.symlink_to(target)
    result = myrm("replay", str(session), "--window", "16000", "--summarizer", "head", "--out", str(link))
    assert result.returncode == 2, result.stderr
    assert "cannot write --out" in result.stderr
    assert target.read_text() == "keep me"
    link.unlink()
    link.write_text("stale " * 1000)  # an existing regular file is replaced from its start
    assert myrm("replay", str(session), "--window", "16000", "--summarizer", "head", "--out", str(link)).returncode == 0
    assert "stale" not in link.read_text()
