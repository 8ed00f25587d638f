"""Every numeric setting is range-checked, and a window that cannot hold
myrm's fixed prefix is refused before the first turn.

Failure first: before the fix, `context_window = 0`, `max_output_tokens = -1`-style values in
model overrides and `llm_timeout = 0` were accepted (a zero timeout fails every call at once,
a zero window makes every turn ContextExhausted), and `myrm run` on a window too small for the
system prompt stored the user's message and then failed the turn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myrm_tui.settings.config_files.loader import load_settings, save_user_settings
from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY
from myrm_tui.settings.value_checks import MODEL_FIELD_MINIMUMS
from myrm_tui.store import Store
from tests.hypothesis_profiles import examples

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 180  # a cold subprocess on a loaded 2-core machine
NUMERIC = [spec for spec in SETTINGS if spec.type in (int, float)]


def in_range(spec, value) -> bool:
    low_ok = (spec.above is None or value > spec.above) and (spec.minimum is None or value >= spec.minimum)
    return low_ok and (spec.maximum is None or value <= spec.maximum)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, user = tmp_path / "ws", tmp_path / "user"
    (workspace / ".myrm").mkdir(parents=True)
    user.mkdir()
    return workspace, user


def test_every_numeric_setting_declares_a_lower_bound():
    missing = [spec.key for spec in NUMERIC if spec.minimum is None and spec.above is None]
    assert missing == [], f"numeric settings without a declared range: {missing}"


@pytest.mark.parametrize(
    "line,key,words",
    [
        ("llm_timeout = 0", "llm_timeout", "more than 0"),
        ("llm_first_token_timeout = 0.0", "llm_first_token_timeout", "more than 0"),
        ("bash_timeout = 0", "bash_timeout", "more than 0"),
        ("max_output_tokens = 0", "max_output_tokens", "at least 1"),
        ("max_output_tokens = -1", "max_output_tokens", "negative"),
        ("max_steps = 0", "max_steps", "at least 1"),
        ("llm_max_attempts = 0", "llm_max_attempts", "at least 1"),
        ("llm_max_attempts = 400", "llm_max_attempts", "at most 20"),
        ("tool_output_cap = 0", "tool_output_cap", "at least 1"),
        ("local_threads = -2", "local_threads", "negative"),
    ],
)
def test_an_out_of_range_value_in_a_file_is_a_named_problem_and_the_default_stays(dirs, line, key, words):
    workspace, user = dirs
    config = user / "config.toml"
    config.write_text(f'model = "x/y"\n{line}\n', encoding="utf-8")
    loaded = load_settings(workspace, user_config_dir=user, env={})
    [problem] = loaded.problems
    assert problem.file == str(config) and problem.line == 2
    assert f"`{key}`" in problem.message and words in problem.message and "ignored" in problem.message
    assert getattr(loaded.settings, key) == SPECS_BY_KEY[key].default
    assert loaded.settings.model == "x/y"  # the rest of the file still applies


@pytest.mark.parametrize(
    "override,words",
    [
        ("context_window = 0", "at least 1"),
        ("context_window = -8192", "negative"),
        ("max_output_tokens = 0", "at least 1"),
        ("input_cost_per_token = -0.5", "negative"),
    ],
)
def test_an_out_of_range_model_override_is_refused_and_the_valid_ones_apply(dirs, override, words):
    workspace, user = dirs
    (user / "config.toml").write_text(f'[models."acme/m"]\nsupports_tools = true\n{override}\n', encoding="utf-8")
    loaded = load_settings(workspace, user_config_dir=user, env={})
    [problem] = loaded.problems
    key = override.split(" =")[0]
    assert f"`{key}` of `acme/m`" in problem.message and words in problem.message and problem.line == 3
    assert loaded.settings.models == {"acme/m": {"supports_tools": True}}


def test_env_and_flags_are_range_checked_too(dirs):
    workspace, user = dirs
    loaded = load_settings(workspace, {"max_steps": 0}, user_config_dir=user, env={"MYRM_LLM_TIMEOUT": "0"})
    by_file = {p.file: p for p in loaded.problems}
    assert "more than 0" in by_file["env"].message and by_file["env"].level == "warning"
    assert "--max-steps" in by_file["flags"].message and by_file["flags"].level == "error"  # the command stops
    assert loaded.settings.llm_timeout == SPECS_BY_KEY["llm_timeout"].default


def test_saving_an_out_of_range_value_is_refused_and_the_file_is_untouched(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("max_steps = 9\n", encoding="utf-8")
    with pytest.raises(ValueError, match="llm_timeout"):
        save_user_settings({"llm_timeout": 0.0}, config)
    with pytest.raises(ValueError, match="context_window"):
        save_user_settings({"models": {"acme/m": {"context_window": 0}}}, config)
    assert config.read_text(encoding="utf-8") == "max_steps = 9\n"


@given(
    spec=st.sampled_from(NUMERIC), value=st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False))
)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_value_applies_exactly_when_it_is_in_its_declared_range(dirs, spec, value):
    workspace, user = dirs
    if spec.type is int:
        value = int(value)
    loaded = load_settings(workspace, user_config_dir=user, env={f"MYRM_{spec.key.upper()}": repr(value)})
    if in_range(spec, value):
        assert loaded.problems == [] and getattr(loaded.settings, spec.key) == value
    else:
        assert len(loaded.problems) == 1 and getattr(loaded.settings, spec.key) == spec.default


def test_model_field_minimums_name_real_override_fields():
    from myrm_tui.settings.config_files.loader import MODEL_OVERRIDE_TYPES

    assert set(MODEL_FIELD_MINIMUMS) <= set(MODEL_OVERRIDE_TYPES)
    assert {k for k, t in MODEL_OVERRIDE_TYPES.items() if t in (int, float)} <= set(MODEL_FIELD_MINIMUMS)


# -- a window too small for the fixed prefix: said before the first turn -----------------------


def _run(workspace: Path, config_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith("_API_KEY")}
    env.update(
        {
            "MYRM_CONFIG_DIR": str(config_dir),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")])),
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "myrm_tui", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def test_run_refuses_a_window_too_small_for_the_fixed_prefix_before_storing_anything(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    script = tmp_path / "tiny.json"
    # 5,000 tokens: the system prompt and tools (~1.95k) and the answer reserve (2.5k, half the
    # window) leave ~35 tokens, not enough for any message.
    script.write_text(json.dumps({"context_window": 5_000, "turns": [{"text": "never"}]}), encoding="utf-8")
    result = _run(workspace, tmp_path / "cfg", "run", "--model", f"scripted/{script}", "hello")
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "too small" in lines[0]
    assert "5,000 tokens" in lines[0] and "max_output_tokens" in lines[0]
    with Store.open(workspace) as store:
        assert store.list_sessions() == []  # nothing stored, nothing to clean up
