"""Headless `myrm run` reads the same permission rules as the TUI (real subprocess, real bash).

Where rules come from: the user's config.toml `[permissions]` (allow and deny), the rules the
TUI's "Always allow" stored for this workspace, and a workspace's `.myrm/config.toml` (deny only:
a cloned repository cannot approve calls for the user).
"""

from __future__ import annotations

import json

from myrm_tui.agent.permissions.rules import remember_allow


def touch_script(script, name: str) -> str:
    return script({"tool_calls": [{"name": "bash", "arguments": {"command": f"touch {name}"}}]}, {"text": "Finished."})


def test_a_user_allow_rule_runs_a_call_the_policy_would_ask_for(myrm, script, workspace):
    (myrm.config_dir / "config.toml").write_text('[permissions]\nallow = ["Bash(touch made-by-rule:*)"]\n')
    result = myrm("run", "--model", touch_script(script, "made-by-rule"), "make it")  # policy: ask
    assert result.returncode == 0, result.stderr
    assert (workspace / "made-by-rule").exists()
    assert "✓ bash ok" in result.stderr


def test_a_rule_stored_by_always_allow_is_read_headless(myrm, script, workspace):
    remember_allow(myrm.config_dir, workspace, ("Bash(touch stored:*)",))
    result = myrm("run", "--model", touch_script(script, "stored"), "make it")
    assert result.returncode == 0, result.stderr
    assert (workspace / "stored").exists()
    other = myrm("run", "--model", touch_script(script, "other"), "make it")  # not covered: still stops
    assert not (workspace / "other").exists() and "not run: touch other" in other.stderr


def test_a_workspace_file_cannot_allow_and_says_so(myrm, script, workspace):
    (workspace / ".myrm").mkdir()
    (workspace / ".myrm" / "config.toml").write_text('[permissions]\nallow = ["Bash"]\n')
    result = myrm("run", "--model", touch_script(script, "from-clone"), "make it")
    assert result.returncode == 0, result.stderr
    assert not (workspace / "from-clone").exists()
    assert "`[permissions] allow` is ignored: a workspace file may only add deny rules" in result.stderr
    assert "not run: touch from-clone" in result.stderr


def test_a_workspace_deny_rule_refuses_even_with_yolo(myrm, script, workspace):
    (workspace / ".myrm").mkdir()
    (workspace / ".myrm" / "config.toml").write_text('[permissions]\ndeny = ["Bash(touch:*)"]\n')
    result = myrm("run", "--json", "--approve", "yolo", "--model", touch_script(script, "blocked"), "make it")
    assert result.returncode == 0, result.stderr
    assert not (workspace / "blocked").exists()
    assert "refused by your deny rule Bash(touch:*) (from " in result.stderr
    assert ".myrm/config.toml:2" in result.stderr
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "denied" and call["content"].startswith("refused: touch blocked (the deny rule")


def test_a_bad_rule_is_a_warning_with_its_line_and_the_others_apply(myrm, script, workspace):
    (myrm.config_dir / "config.toml").write_text('[permissions]\nallow = ["Bsh(x)", "Bash(touch good:*)"]\n')
    result = myrm("run", "--model", touch_script(script, "good"), "make it")
    assert result.returncode == 0, result.stderr
    assert "config.toml:2: [permissions] allow: 'Bsh(x)' names no known tool" in result.stderr
    assert (workspace / "good").exists()
