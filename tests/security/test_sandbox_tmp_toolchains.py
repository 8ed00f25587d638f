"""A toolchain that lives under /tmp (a CI cache, a virtualenv, a repository cloned there) stays
usable in the sandbox, whose private /tmp would otherwise hide it (issue 24); read-only, while the
rest of the private /tmp stays empty and writable."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.security.sandbox_calls import bash


@pytest.fixture
def toolchain(monkeypatch):
    prefix = Path(tempfile.mkdtemp(prefix="myrm-toolchain-", dir="/tmp"))
    (prefix / "bin").mkdir()
    (prefix / "share").mkdir()
    (prefix / "share" / "greeting.txt").write_text("toolchain data\n")
    tool = prefix / "bin" / "mytool"
    tool.write_text('#!/bin/sh\ncat "$(dirname "$0")/../share/greeting.txt"\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{prefix / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin")
    yield prefix
    shutil.rmtree(prefix, ignore_errors=True)


async def test_a_toolchain_under_tmp_runs_inside_the_sandbox(toolchain, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = await bash(workspace, "mytool && echo scratch > /tmp/own && cat /tmp/own")
    assert result.status == "ok", result.content
    assert "toolchain data" in result.content and "scratch" in result.content


async def test_it_is_read_only_and_the_hosts_other_tmp_files_stay_hidden(toolchain, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    other = Path(tempfile.mkdtemp(prefix="myrm-other-", dir="/tmp"))
    try:
        (other / "secret.txt").write_text("not yours\n")
        result = await bash(workspace, f"echo x > {toolchain}/share/greeting.txt; cat {other}/secret.txt")
        assert "Read-only file system" in result.content and "not yours" not in result.content
        assert (toolchain / "share" / "greeting.txt").read_text() == "toolchain data\n"
    finally:
        shutil.rmtree(other, ignore_errors=True)
