"""Layered settings: order, typing, bad input reported (not raised), secrets refused, saving."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from myrm_tui.settings import paths
from myrm_tui.settings.config_files.loader import ConfigWriteError, load_settings, save_user_settings
from myrm_tui.settings.schema import SETTINGS


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / ".myrm").mkdir(parents=True)
    user = tmp_path / "user"
    user.mkdir()
    return workspace, user


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_files_gives_schema_defaults(dirs):
    workspace, user = dirs
    loaded = load_settings(workspace, user_config_dir=user, env={})
    assert loaded.problems == []
    assert loaded.files_found == []
    for spec in SETTINGS:
        assert getattr(loaded.settings, spec.key) == spec.default
        assert loaded.settings.sources[spec.key] == "default"


def test_layers_later_wins_and_sources_are_recorded(dirs):
    workspace, user = dirs
    user_file = write(
        user / "config.toml", 'model = "user/m"\nmax_steps = 10\ntheme = "u-theme"\napproval = "auto-edit"\n'
    )
    ws_file = write(workspace / ".myrm/config.toml", 'max_steps = 20\ntheme = "ws-theme"\napproval = "deny"\n')
    env = {"MYRM_THEME": "env-theme", "MYRM_APPROVAL": "yolo"}
    loaded = load_settings(workspace, {"approval": "ask", "model": None}, user_config_dir=user, env=env)
    s = loaded.settings
    assert loaded.problems == []
    assert loaded.files_found == [user_file, ws_file]
    assert (s.model, s.max_steps, s.theme, s.approval) == ("user/m", 20, "env-theme", "ask")
    assert s.sources["model"] == str(user_file)
    assert s.sources["max_steps"] == str(ws_file)
    assert s.sources["theme"] == "env MYRM_THEME"
    assert s.sources["approval"] == "flag --approval"  # a None flag (model) did not override


def test_env_values_are_typed(dirs):
    workspace, user = dirs
    env = {
        "MYRM_MAX_STEPS": " 7 ",
        "MYRM_BASH_TIMEOUT": "2.5",
        "MYRM_ANIMATIONS": "off",
        "MYRM_ALLOW_OUTSIDE_WORKSPACE": "yes",
    }
    s = load_settings(workspace, user_config_dir=user, env=env).settings
    assert s.max_steps == 7 and isinstance(s.max_steps, int)
    assert s.bash_timeout == 2.5
    assert s.animations is False
    assert s.allow_outside_workspace is True


@pytest.mark.parametrize(
    "var,value,expected_words",
    [
        ("MYRM_MAX_STEPS", "lots", "whole number"),
        ("MYRM_BASH_TIMEOUT", "soon", "a number"),
        ("MYRM_ANIMATIONS", "maybe", "true or false"),
        ("MYRM_APPROVAL", "always", "one of ask, auto-edit, yolo, deny"),
        ("MYRM_MAX_STEPS", "-3", "negative"),
    ],
)
def test_env_typing_errors_are_problems_and_keep_the_earlier_value(dirs, var, value, expected_words):
    workspace, user = dirs
    write(user / "config.toml", "max_steps = 9\n")
    loaded = load_settings(workspace, user_config_dir=user, env={var: value})
    assert len(loaded.problems) == 1
    problem = loaded.problems[0]
    assert problem.file == "env" and var in problem.message and expected_words in problem.message
    assert problem.level == "warning"
    key = var.removeprefix("MYRM_").lower()
    assert getattr(loaded.settings, key) == (
        9 if key == "max_steps" else next(s.default for s in SETTINGS if s.key == key)
    )


def test_corrupt_toml_names_file_and_line_and_other_layers_still_load(dirs):
    workspace, user = dirs
    write(user / "config.toml", 'model = "user/m"\n')
    broken = write(workspace / ".myrm/config.toml", 'theme = "ok"\n\nmax_steps = = 3\n')
    loaded = load_settings(workspace, user_config_dir=user, env={"MYRM_MAX_OUTPUT_TOKENS": "100"})
    assert len(loaded.problems) == 1
    problem = loaded.problems[0]
    assert problem.file == str(broken) and problem.line == 3
    assert str(problem).startswith(f"{broken}:3: not valid TOML")
    s = loaded.settings
    assert s.model == "user/m" and s.max_output_tokens == 100
    assert s.theme == "myrm-dark" and s.max_steps == 50  # nothing from the broken file


def test_unknown_key_and_wrong_type_are_warnings_with_lines(dirs):
    workspace, user = dirs
    cfg = write(user / "config.toml", 'modle = "x"\nmax_steps = "ten"\nprompt_mode = "lean"\n')
    loaded = load_settings(workspace, user_config_dir=user, env={})
    by_line = {p.line: p for p in loaded.problems}
    assert set(by_line) == {1, 2}
    assert "unknown setting `modle`" in by_line[1].message and "did you mean `model`" in by_line[1].message
    assert "must be a whole number" in by_line[2].message
    assert all(p.file == str(cfg) and p.level == "warning" for p in loaded.problems)
    assert loaded.settings.prompt_mode == "lean" and loaded.settings.max_steps == 50


def test_int_is_accepted_for_float_settings_but_bool_is_not_an_int(dirs):
    workspace, user = dirs
    write(user / "config.toml", "bash_timeout = 30\nmax_steps = true\n")
    loaded = load_settings(workspace, user_config_dir=user, env={})
    assert loaded.settings.bash_timeout == 30.0 and isinstance(loaded.settings.bash_timeout, float)
    assert loaded.settings.max_steps == 50
    assert [p.line for p in loaded.problems] == [2]


def test_api_keys_in_config_are_refused_and_never_loaded(dirs):
    workspace, user = dirs
    secret = "sk-this-must-not-leak"
    write(
        user / "config.toml",
        f'anthropic_api_key = "{secret}"\n\n[models."openai/x"]\n'
        f'api_base = "http://127.0.0.1:1/v1"\napi_key = "{secret}"\n',
    )
    loaded = load_settings(workspace, user_config_dir=user, env={})
    assert [p.line for p in loaded.problems] == [1, 5]
    for problem in loaded.problems:
        assert "looks like an API key" in problem.message and "environment" in problem.message
        assert secret not in problem.message
    assert dict(loaded.settings.models) == {"openai/x": {"api_base": "http://127.0.0.1:1/v1"}}
    assert secret not in repr(loaded.settings)


def test_models_and_keymap_tables_merge_across_files(dirs):
    workspace, user = dirs
    write(
        user / "config.toml",
        '[models."openai/llama3"]\napi_base = "http://localhost:11434/v1"\n'
        "context_window = 8192\nsupports_tools = false\n\n[keymap]\n"
        '"app.quit" = "ctrl+q"\nsend = "enter"\n',
    )
    write(
        workspace / ".myrm/config.toml",
        '[models."openai/llama3"]\ncontext_window = 32768\n'
        'input_cost_per_token = 0\nwindow = 5\n\n[keymap]\nsend = "ctrl+enter"\n',
    )
    loaded = load_settings(workspace, user_config_dir=user, env={})
    assert dict(loaded.settings.models["openai/llama3"]) == {
        "api_base": "http://localhost:11434/v1",
        "context_window": 32768,
        "supports_tools": False,
        "input_cost_per_token": 0.0,
    }
    assert dict(loaded.settings.keymap) == {"app.quit": "ctrl+q", "send": "ctrl+enter"}
    assert len(loaded.problems) == 1 and "unknown model override `window`" in loaded.problems[0].message
    assert loaded.problems[0].line == 4


def test_invalid_flag_is_an_error_level_problem(dirs):
    workspace, user = dirs
    loaded = load_settings(workspace, {"approval": "sometimes"}, user_config_dir=user, env={})
    assert [p.level for p in loaded.problems] == ["error"]
    assert "--approval" in str(loaded.problems[0])
    assert loaded.settings.approval == "ask"


def test_config_dir_override_env(tmp_path):
    assert paths.user_config_dir({"MYRM_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert paths.user_config_file({"MYRM_CONFIG_DIR": str(tmp_path)}) == tmp_path / "config.toml"
    assert paths.user_config_dir({}).name == "myrm"


def test_default_user_config_dir_comes_from_env_override(tmp_path, monkeypatch):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("MYRM_CONFIG_DIR", str(tmp_path / "u"))
    write(tmp_path / "u" / "config.toml", "max_steps = 4\n")
    assert load_settings(workspace).settings.max_steps == 4


def test_save_round_trip_keeps_other_keys_and_loads_back(dirs):
    workspace, user = dirs
    cfg = write(
        user / "config.toml",
        '# my notes\ntheme = "mine"\ncustom_thing = 1\n\n'
        '[models."a/b"]\ncontext_window = 1000\n\n[keymap]\nsend = "enter"\n',
    )
    save_user_settings(
        {
            "max_steps": 12,
            "bash_timeout": 3,
            "model": 'odd "name"\\x',
            "models": {"openai/llama3": {"api_base": "http://h/v1"}, "a/b": {"supports_tools": True}},
            "keymap": {"app.quit": "ctrl+q"},
        },
        cfg,
    )
    data = tomllib.loads(cfg.read_text(encoding="utf-8"))
    assert data["theme"] == "mine" and data["custom_thing"] == 1
    assert data["max_steps"] == 12 and data["bash_timeout"] == 3.0 and data["model"] == 'odd "name"\\x'
    assert data["models"] == {
        "a/b": {"context_window": 1000, "supports_tools": True},
        "openai/llama3": {"api_base": "http://h/v1"},
    }
    assert data["keymap"] == {"send": "enter", "app.quit": "ctrl+q"}
    s = load_settings(workspace, user_config_dir=user, env={}).settings
    assert (s.max_steps, s.bash_timeout, s.model) == (12, 3.0, 'odd "name"\\x')
    # None removes a key (back to the default); the file stays valid
    save_user_settings({"max_steps": None, "models": {"a/b": None}}, cfg)
    data = tomllib.loads(cfg.read_text(encoding="utf-8"))
    assert "max_steps" not in data and "a/b" not in data["models"]
    assert [p.name for p in cfg.parent.iterdir()] == ["config.toml"]  # no temp files left


def test_save_creates_missing_file_private(tmp_path):
    cfg = tmp_path / "new" / "dir" / "config.toml"
    save_user_settings({"theme": "x", "animations": False}, cfg)
    assert tomllib.loads(cfg.read_text()) == {"theme": "x", "animations": False}
    assert os.stat(cfg).st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "changes",
    [
        {"max_steps": "ten"},
        {"approval": "sometimes"},
        {"nonsense": 1},
        {"anthropic_api_key": "sk"},
        {"models": {"x/y": {"api_key": "sk"}}},
        {"models": {"x/y": {"context_window": "big"}}},
        {"keymap": {"send": ""}},
    ],
)
def test_save_refuses_invalid_changes_and_leaves_file_untouched(tmp_path, changes):
    cfg = write(tmp_path / "config.toml", 'theme = "mine"\n')
    with pytest.raises(ValueError):
        save_user_settings(changes, cfg)
    assert cfg.read_text() == 'theme = "mine"\n'


def test_save_refuses_to_overwrite_a_corrupt_file(tmp_path):
    cfg = write(tmp_path / "config.toml", "theme = = broken\n")
    with pytest.raises(ConfigWriteError, match="not valid TOML"):
        save_user_settings({"theme": "x"}, cfg)
    assert cfg.read_text() == "theme = = broken\n"


def test_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    cfg = write(tmp_path / "config.toml", 'theme = "mine"\n')

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_user_settings({"theme": "new"}, cfg)
    assert cfg.read_text() == 'theme = "mine"\n'
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]
