"""Without a working sandbox, headless `myrm run` runs no bash at all (even with --approve yolo)
unless the user set `sandbox = "off"` themselves, and says what to install or set; and a command
can no longer read myrm's provider keys from /proc/$PPID/environ (checked as a normal user: root
may read any process, which docs/security.md says)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-myrm-headless-0b7e"


def _bin_without_bwrap(folder: Path) -> Path:
    folder.mkdir()
    for name in ("bash", "sh", "cat", "env", "tr", "grep", "git"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    return folder


def _run(workspace: Path, config: Path, command: str, env: dict[str, str], user: list[str] | None = None):
    script = config / "script.json"
    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "done"}]
    script.write_text(json.dumps({"turns": turns}))
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")},
        "MYRM_CONFIG_DIR": str(config),
        "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH", ""), str(REPO)])),
        "OPENAI_API_KEY": KEY,
        **env,
    }
    argv = [*(user or []), sys.executable, "-m", "myrm_tui", "run", "--json", "--approve", "yolo"]
    argv += ["--model", f"scripted/{script}", "go"]
    return subprocess.run(argv, cwd=workspace, env=full, capture_output=True, text=True, timeout=180, check=False)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, config = tmp_path / "ws", tmp_path / "config"
    (workspace / ".git").mkdir(parents=True)
    config.mkdir()
    return workspace, config


@pytest.mark.slow
def test_headless_yolo_refuses_bash_when_the_sandbox_cannot_start(dirs, tmp_path):
    workspace, config = dirs
    outside = tmp_path / "outside.txt"
    path = str(_bin_without_bwrap(tmp_path / "bin"))
    result = _run(workspace, config, f"echo reached > {outside}", {"PATH": path})
    assert result.returncode == 0, result.stderr
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "denied", call
    assert not outside.exists()
    assert "bwrap was not found" in result.stderr and "apt install bubblewrap" in result.stderr
    assert 'sandbox = "off"' in result.stderr


@pytest.mark.slow
def test_the_users_explicit_off_lets_headless_bash_run_unsandboxed(dirs, tmp_path):
    workspace, config = dirs
    outside = tmp_path / "outside.txt"
    path = str(_bin_without_bwrap(tmp_path / "bin"))
    result = _run(workspace, config, f"echo reached > {outside}", {"PATH": path, "MYRM_SANDBOX": "off"})
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "ok" and outside.read_text() == "reached\n"


@pytest.mark.slow
def test_a_workspace_cannot_switch_the_sandbox_off_for_a_headless_run(dirs, tmp_path):
    workspace, config = dirs
    (workspace / ".myrm").mkdir()
    (workspace / ".myrm" / "config.toml").write_text('sandbox = "off"\n')
    outside = tmp_path / "outside.txt"
    path = str(_bin_without_bwrap(tmp_path / "bin"))
    result = _run(workspace, config, f"echo reached > {outside}", {"PATH": path})
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["status"] == "denied" and not outside.exists()


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv to run myrm as a normal user")
def test_an_unsandboxed_command_cannot_read_the_keys_myrm_was_started_with():
    root = Path(tempfile.mkdtemp(prefix="myrm-environ-", dir="/var/tmp"))
    try:
        workspace, config = root / "ws", root / "config"
        (workspace / ".git").mkdir(parents=True)
        config.mkdir()
        for folder in (root, workspace, workspace / ".git", config):
            folder.chmod(0o777)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        command = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c OPENAI_API_KEY; echo read-done"
        result = _run(workspace, config, command, {"MYRM_SANDBOX": "off", "HOME": str(root)}, user=nobody)
        assert result.returncode == 0, result.stderr
        (call,) = json.loads(result.stdout)["tool_calls"]
        assert "read-done" in call["content"], call
        assert KEY not in call["content"] and "Permission denied" in call["content"], call
    finally:
        shutil.rmtree(root, ignore_errors=True)
