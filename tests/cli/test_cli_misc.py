"""`myrm doctor`, `myrm models`, the no-model onboarding path, and the import budget of cli.py."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_the_cli_loads_neither_litellm_nor_textual(myrm):
    code = (
        "import sys, myrm_tui.cli; "
        "print([m for m in sys.modules if m.split('.')[0] in ('litellm', 'textual', 'openai')])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env=myrm.env(),
        cwd=myrm.workspace,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_help_and_version(myrm):
    result = myrm("--help")
    assert result.returncode == 0
    for command in ("run", "sessions", "models", "doctor"):
        assert command in result.stdout
    version = myrm("--version")
    assert version.returncode == 0 and version.stdout.startswith("myrm ")


def test_models_search_table(myrm):
    result = myrm("models", "--search", "gpt-4o", "--limit", "5")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "MODEL",
        "READY",
        "WINDOW",
        "MAX",
        "OUT",
        "TOOLS",
        "VISION",
        "CACHE",
        "REASON",
        "IN",
        "$/1M",
        "OUT",
        "$/1M",
    ]
    assert 1 <= len(lines) - 1 <= 5
    assert all("gpt-4o" in line.split()[0] for line in lines[1:])
    row = next(line.split() for line in lines[1:] if line.split()[0] == "openai/gpt-4o")
    assert row[1] == "-", "no OpenAI key in the test environment: not ready"
    assert row[2] == "128,000" and row[4] == "yes"  # window and tool support
    assert float(row[-2]) > 0 and float(row[-1]) > float(row[-2])  # output costs more than input
    assert "\x1b" not in result.stdout
    assert "more — use --limit" in result.stderr, "a cut list says how many were left out"


def test_models_lists_what_can_run_now_first(myrm):
    plain = myrm("models", "--limit", "3").stdout.splitlines()
    assert plain[1].split()[:2] == ["local/smollm2", "yes"], "the embedded model needs no key"
    keyed = myrm("models", "--search", "claude", "--limit", "3", env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    rows = [line.split() for line in keyed.stdout.splitlines()[1:]]
    assert rows and all(row[1] == "yes" for row in rows), "models of a provider whose key is set come first"


def test_models_json_and_no_match(myrm):
    result = myrm("models", "--search", "gpt-4o-mini", "--limit", "3", "--json")
    rows = json.loads(result.stdout)
    assert rows and all("gpt-4o-mini" in r["name"] for r in rows)
    assert {"context_window", "input_cost_per_token", "supports_tools"} <= set(rows[0])
    none = myrm("models", "--search", "no-such-model-xyz")
    assert none.returncode == 0 and none.stdout == "" and "no model matches" in none.stderr


def test_doctor_ready_with_a_configured_model(myrm, script, workspace):
    model = script({"text": "hi"})
    (myrm.config_dir / "config.toml").write_text(f'model = "{model}"\nmodle = 1\n')
    result = myrm("doctor", env={"OPENAI_API_KEY": "sk-secret-value"})
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"✓ {myrm.config_dir / 'config.toml'}" in out
    assert "unknown setting `modle`" in out  # problems are listed in the report
    assert f"model                   = '{model}'  ({myrm.config_dir / 'config.toml'})" in out
    assert "✓ API key set: OPENAI_API_KEY" in out and "sk-secret-value" not in out
    assert f"✓ model: {model}" in out
    # doctor only reads: a workspace without a store is reported, not created
    assert f"· {workspace / '.myrm'} does not exist yet; myrm creates it on first use" in out
    assert not (workspace / ".myrm").exists()
    assert "✓ tokenizer files offline:" in out
    assert out.rstrip().endswith("✓ myrm is ready.")


def test_doctor_fails_when_the_store_cannot_be_opened(myrm, script, workspace):
    (workspace / ".myrm").write_text("not a folder")
    result = myrm("doctor", env={"MYRM_MODEL": script({"text": "hi"})})
    assert result.returncode == 1
    assert f"✗ cannot open {workspace / '.myrm'}" in result.stdout
    assert "cannot run yet" in result.stdout


def test_without_any_model_run_prints_onboarding_and_doctor_fails(myrm):
    run = myrm.without_local_model("run", "hello")
    assert run.returncode == 2, run.stderr
    assert "No model is configured" in run.stderr and "ANTHROPIC_API_KEY" in run.stderr
    assert "Traceback" not in run.stderr
    doctor = myrm.without_local_model("doctor")
    assert doctor.returncode == 1
    assert "✗ no model can be chosen" in doctor.stdout
    assert "local model local/smollm2 not installed" in doctor.stdout


def test_tui_launch_rejects_bad_session_before_opening_the_screen(myrm, script):
    model = script({"text": "hi"})
    unknown = myrm("--model", model, "--session", "nope")
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr
    both = myrm("--model", model, "--session", "x", "--continue")
    assert both.returncode == 2 and "either --session" in both.stderr
