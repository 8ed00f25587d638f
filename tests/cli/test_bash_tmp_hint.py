"""A sandboxed command that looks for a file under /tmp finds the sandbox's own empty /tmp; the
bash result says so instead of a bare "No such file or directory" (before: no hint at all)."""

from __future__ import annotations

import json

import pytest

from myrm_tui.agent.sandbox import sandbox_status


@pytest.mark.skipif(not sandbox_status("workspace-write").active, reason="bwrap cannot start a sandbox here")
def test_a_missing_tmp_file_in_the_sandbox_gets_a_hint(myrm, script, tmp_path):
    outside = tmp_path / "data.csv"  # under the machine's /tmp, outside the workspace
    outside.write_text("a,b\n1,2\n")
    assert str(outside).startswith("/tmp/")
    model = script(
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": f"cat {outside}"}}]},
        {"text": "done"},
    )
    sandboxed = myrm(
        "run", "--json", "--approve", "yolo", "--model", model, "read it", env={"MYRM_SANDBOX": "workspace-write"}
    )
    (call,) = json.loads(sandboxed.stdout)["tool_calls"]
    assert "No such file or directory" in call["content"]
    assert "/tmp in here is private" in call["content"]
    unsandboxed = myrm("run", "--json", "--approve", "yolo", "--model", model, "read it", env={"MYRM_SANDBOX": "off"})
    (call,) = json.loads(unsandboxed.stdout)["tool_calls"]
    assert "1,2" in call["content"] and "private" not in call["content"]
