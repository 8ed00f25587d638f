"""Logs are written through their folder's handle: a link planted where a log file goes (by any
process that can write the log folder) never turns a log line into a write elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.log_files import MAX_LOG_BYTES, append_log
from myrm_tui.mcp.server_log import log_path, open_log


@pytest.fixture
def logs(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    monkeypatch.setenv("MYRM_LOG_DIR", str(folder))
    return folder


def test_a_link_at_the_log_file_is_not_written_through(logs, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    (logs / "crash.log").symlink_to(victim)
    assert append_log("crash.log", "a crash") is None
    assert victim.read_text() == "untouched\n"


def test_a_link_at_an_mcp_servers_log_is_not_written_through(logs, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    log_path("git").symlink_to(victim)
    handle, _ = open_log("git")
    with handle:
        handle.write("server stderr\n")
    assert victim.read_text() == "untouched\n"


def test_a_full_log_is_rotated_once_and_the_new_line_lands(logs):
    (logs / "crash.log").write_text("x" * (MAX_LOG_BYTES + 1))
    path = append_log("crash.log", "the new crash")
    assert path is not None and path == logs / "crash.log"
    assert "the new crash" in path.read_text() and (logs / "crash.log.1").stat().st_size > MAX_LOG_BYTES
