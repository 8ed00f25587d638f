"""The loader split by job keeps its public names where importers look for them."""

from __future__ import annotations

from myrm_tui.settings.config_files import loader


def test_public_names_still_come_from_the_loader():
    from myrm_tui.settings.config_files.problems import ConfigProblem, ConfigWriteError
    from myrm_tui.settings.config_files.write import save_user_settings
    from myrm_tui.settings.sections.model_overrides import MODEL_OVERRIDE_TYPES

    assert loader.ConfigProblem is ConfigProblem and loader.ConfigWriteError is ConfigWriteError
    assert loader.save_user_settings is save_user_settings
    assert loader.MODEL_OVERRIDE_TYPES is MODEL_OVERRIDE_TYPES
    assert callable(loader.load_settings) and loader.ENV_PREFIX == "MYRM_"


def test_every_layer_still_applies_in_order(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.toml").write_text('theme = "from-user"\nmax_steps = 7\nbash_timeout = 3\n')
    workspace = tmp_path / "ws"
    (workspace / ".myrm").mkdir(parents=True)
    (workspace / ".myrm" / "config.toml").write_text('theme = "from-workspace"\nmax_steps = 0\n')
    loaded = loader.load_settings(workspace, {"max_steps": 9}, user_config_dir=user, env={"MYRM_BASH_TIMEOUT": "4"})
    settings = loaded.settings
    assert settings.theme == "from-workspace" and settings.sources["theme"].endswith(".myrm/config.toml")
    assert settings.max_steps == 9 and settings.sources["max_steps"] == "flag --max-steps"
    assert settings.bash_timeout == 4.0 and isinstance(settings.bash_timeout, float)
    assert [p.message for p in loaded.problems] == ["`max_steps` must be at least 1, not 0. It is ignored."]
    assert loaded.problems[0].line == 2
