"""The first frame needs neither the agent's turn loop nor the context engine: importing the app
module must not load them (they load with the warm-up or on first use; docs/tui-benchmarks.md,
"Issue 17"). Not a timing: which modules are in `sys.modules`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # the checkout under test, not an installed copy
DEFERRED = ("myrm_tui.agent.agent", "myrm_tui.agent.tools", "myrm_tui.context.engine", "myrm_tui.agent.undo.rewind")


def test_app_module_does_not_import_the_agent_or_the_engine():
    code = f"import sys, myrm_tui.tui.app; print(','.join(m for m in {DEFERRED!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_agent_package_still_exports_agent_on_use():
    from myrm_tui import agent
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.session_runtime import SessionRuntime

    assert agent.Agent is Agent and agent.SessionRuntime is SessionRuntime


# What the `myrm` launch must not have loaded when it starts the app: the store and SQLite, the
# built-in output filters, the LLM layer and litellm (the unknown-model check runs behind the
# first frame), tomlkit (only for saving settings) and the shell lexer (only for Bash rules).
NOT_BEFORE_THE_APP = (
    "sqlite3",
    "myrm_tui.store.store",
    "myrm_tui.context.filters.smart",
    "myrm_tui.llm.stream",
    "litellm",
    "tomlkit",
    "myrm_tui.shell_lex",
)

LAUNCH = """
import sys
import myrm_tui.tui.app as app_module
from myrm_tui.cli_commands.plain_launch import launch_if_plain

def fake_run_app(**kwargs):
    print("loaded:" + ",".join(m for m in {modules!r} if m in sys.modules))
    return app_module.AppOutcome(resumable=None, refusal={refusal!r})

app_module.run_app = fake_run_app
raise SystemExit(launch_if_plain(["--model", {model!r}]))
"""


def _launch(tmp_path, model: str, refusal: str | None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "MYRM_CONFIG_DIR": str(tmp_path / "config"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "MYRM_NO_SUPERVISOR": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])),
    }
    code = LAUNCH.format(modules=NOT_BEFORE_THE_APP, refusal=refusal, model=model)
    work = tmp_path / "ws"
    work.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=work)


def test_the_launch_starts_the_app_before_loading_the_store_the_filters_or_the_llm_layer(tmp_path):
    result = _launch(tmp_path, "anthropic/claude-sonnet-4-5", None)  # a registry name: checked after paint
    assert result.returncode == 0, result.stderr
    assert "loaded:\n" in result.stdout, result.stdout


def test_a_model_refused_behind_the_first_frame_exits_2_with_one_error_line(tmp_path):
    result = _launch(tmp_path, "gpt-9", "Unknown model 'gpt-9': not in the model registry.")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["error: Unknown model 'gpt-9': not in the model registry."], result.stderr
    assert not (tmp_path / "ws" / ".myrm").exists(), "no store was created"
