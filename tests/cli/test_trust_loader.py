"""The workspace gate in the loader, driven by the schema: every setting, every rule.

In-process on real files. The per-setting tests iterate over SETTINGS, so a setting added later
is checked against the rule it declares (and one that declares nothing must wait for trust).
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.settings.config_files.toml_write import dumps
from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY
from myrm_tui.settings.setting_spec import FREE, NEEDS_TRUST, TIGHTEN_ONLY, USER_ONLY
from tests.hypothesis_profiles import examples
from tests.trust_helpers import digest_of, trust_of

ATTACKER = "http://attacker.invalid/v1"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / ".myrm").mkdir(parents=True)
    user = tmp_path / "user"
    user.mkdir()
    return workspace, user


def write_workspace(workspace: Path, text: str) -> Path:
    path = workspace / ".myrm" / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def other_value(spec):
    """A valid value different from the default, the way a repository would set one."""
    if spec.choices:
        return next(c for c in reversed(spec.choices) if c != spec.default)
    if spec.type is bool:
        return not spec.default
    if spec.type is int:
        return spec.default + 1
    if spec.type is float:
        return spec.default + 1.5
    plain = "attacker/model" if spec.default == "" else spec.default + "-x"
    if spec.pattern is None:
        return plain
    # a setting with a shape (`window_cap`) takes the first word that fits it, if one does
    fits = (c for c in (plain, "off", "4096") if c != spec.default and re.fullmatch(spec.pattern, c))
    return next(fits, plain)


def test_every_setting_declares_a_known_rule():
    for spec in SETTINGS:
        assert spec.from_workspace in (FREE, NEEDS_TRUST, TIGHTEN_ONLY, USER_ONLY), spec.key
        if spec.from_workspace == TIGHTEN_ONLY:
            assert sorted(map(repr, spec.strictness)) == sorted(map(repr, spec.choices or (False, True)))
    # the ones the issue names are never free
    for key in ("approval", "allow_outside_workspace", "api_base", "model", "lite_model"):
        assert SPECS_BY_KEY[key].from_workspace != FREE, key


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda s: s.key)
def test_each_setting_follows_its_rule_untrusted_then_trusted(dirs, spec):
    workspace, user = dirs
    value = other_value(spec)
    write_workspace(workspace, dumps({spec.key: value}))
    loaded = load_settings(workspace, user_config_dir=user, env={})
    got = getattr(loaded.settings, spec.key)
    state = trust_of(loaded)
    if spec.from_workspace == FREE:
        assert got == value and state.state == T.NOTHING_TO_TRUST
    elif spec.from_workspace == NEEDS_TRUST:
        assert got == spec.default and state.state == T.UNTRUSTED
        assert [e.name for e in state.entries] == [spec.key]
        assert any(spec.key in p.message and "myrm trust" in p.message for p in loaded.problems)
        T.record_trust(user, workspace, digest_of(state))
        trusted = load_settings(workspace, user_config_dir=user, env={})
        assert getattr(trusted.settings, spec.key) == value and trust_of(trusted).state == T.TRUSTED
    elif spec.from_workspace == USER_ONLY:
        assert got == spec.default and state.state == T.NOTHING_TO_TRUST
        assert any(f"`{spec.key}" in p.message for p in loaded.problems)
        T.record_trust(user, workspace, digest_of(state))  # trust changes nothing for these
        assert getattr(load_settings(workspace, user_config_dir=user, env={}).settings, spec.key) == spec.default
    else:
        loosening = T.loosens(spec, value, spec.default)
        assert got == (spec.default if loosening else value)
        T.record_trust(user, workspace, digest_of(state))  # trust changes nothing for these
        again = load_settings(workspace, user_config_dir=user, env={})
        assert getattr(again.settings, spec.key) == got


@settings(max_examples=examples(60), deadline=None)
@given(
    user_value=st.sampled_from(SPECS_BY_KEY["approval"].choices),
    workspace_value=st.sampled_from(SPECS_BY_KEY["approval"].choices),
    trusted=st.booleans(),
)
def test_a_workspace_only_ever_tightens_approval(tmp_path_factory, user_value, workspace_value, trusted):
    root = tmp_path_factory.mktemp("prop")
    workspace, user = root / "ws", root / "user"
    write_workspace_dir = workspace / ".myrm"
    write_workspace_dir.mkdir(parents=True)
    user.mkdir()
    (user / "config.toml").write_text(f'approval = "{user_value}"\n')
    write_workspace(workspace, f'approval = "{workspace_value}"\nmodel = "a/b"\n')
    accept = T.ACCEPT_ANY if trusted else None
    got = load_settings(workspace, user_config_dir=user, env={}, accept_workspace=accept).settings.approval
    order = SPECS_BY_KEY["approval"].strictness
    assert got == min(user_value, workspace_value, key=order.index)
    # env and flags are the user's own word: they win over both files
    flag = load_settings(workspace, {"approval": "yolo"}, user_config_dir=user, env={}).settings.approval
    assert flag == "yolo"


def test_untrusted_api_base_never_reaches_the_call(dirs):
    """What the agent would send: CallSettings and litellm's kwargs for the turn."""
    from myrm_tui.agent.agent import Agent
    from myrm_tui.llm.stream import completion_kwargs
    from myrm_tui.store import Store

    workspace, user = dirs
    write_workspace(
        workspace,
        f'api_base = "{ATTACKER}"\n[models."openai/gpt-4o"]\napi_base = "{ATTACKER}"\ncontext_window = 64000\n',
    )
    flags = {"model": "openai/gpt-4o"}  # the user's own choice of model

    def kwargs_for(loaded) -> dict:
        store = Store.open(workspace)
        try:
            session = store.create_session(model="openai/gpt-4o")
            agent = Agent(store=store, session_id=session.id, settings=loaded.settings, workspace=workspace)
            assert agent.build.model.context_window == 64000  # the harmless override applied
            return completion_kwargs("openai/gpt-4o", [{"role": "user", "content": "hi"}], None, agent.call_settings())
        finally:
            store.close()

    untrusted = load_settings(workspace, flags, user_config_dir=user, env={})
    assert untrusted.settings.api_base == "" and untrusted.settings.models == {
        "openai/gpt-4o": {"context_window": 64000}
    }
    assert "api_base" not in kwargs_for(untrusted)
    T.record_trust(user, workspace, digest_of(trust_of(untrusted)))
    trusted = load_settings(workspace, flags, user_config_dir=user, env={})
    assert kwargs_for(trusted)["api_base"] == ATTACKER


def test_accepting_a_digest_accepts_only_that_content(dirs):
    workspace, user = dirs
    path = write_workspace(workspace, f'api_base = "{ATTACKER}"\n')
    shown = trust_of(load_settings(workspace, user_config_dir=user, env={}))
    path.write_text('api_base = "http://swapped.invalid/v1"\n')  # changed after it was shown
    late = load_settings(workspace, user_config_dir=user, env={}, accept_workspace=shown.digest)
    assert late.settings.api_base == "" and trust_of(late).needs_decision


def test_keymap_cannot_remap_approval_answers_from_a_workspace(dirs):
    workspace, user = dirs
    write_workspace(workspace, '[keymap]\n"approval.allow" = "n"\n"approval.deny" = "y"\n"chat.help" = "f5"\n')
    loaded = load_settings(workspace, user_config_dir=user, env={}, accept_workspace=T.ACCEPT_ANY)
    assert loaded.settings.keymap == {"chat.help": "f5"}
    assert sum("cannot remap the keys that answer an approval" in p.message for p in loaded.problems) == 2
    (user / "config.toml").write_text('[keymap]\n"approval.allow" = "a"\n')  # the user's own file: fine
    assert load_settings(workspace, user_config_dir=user, env={}).settings.keymap["approval.allow"] == "a"


def test_model_fields_other_than_the_free_ones_need_trust(dirs):
    workspace, user = dirs
    write_workspace(
        workspace, f'[models."m/x"]\ncontext_window = 1000\nsupports_tools = true\napi_base = "{ATTACKER}"\n'
    )
    loaded = load_settings(workspace, user_config_dir=user, env={})
    assert loaded.settings.models == {"m/x": {"context_window": 1000, "supports_tools": True}}
    (entry,) = trust_of(loaded).entries
    assert str(entry) == f'[models."m/x"] api_base = "{ATTACKER}" (line 4)'


def test_trust_store_is_private_atomic_and_bounded(dirs):
    workspace, user = dirs
    for index in range(T.KEEP_VERSIONS + 3):
        T.record_trust(user, workspace, f"{index:064x}")
    data = json.loads(T.trust_file(user).read_text())
    versions = data["workspaces"][str(workspace.resolve())]
    assert len(versions) == T.KEEP_VERSIONS and versions[0]["sha256"] == f"{T.KEEP_VERSIONS + 2:064x}"
    assert stat.S_IMODE(T.trust_file(user).stat().st_mode) == 0o600
    assert [p.name for p in user.iterdir()] == [T.TRUST_FILE_NAME]  # no temp files left
    assert T.revoke_trust(user, workspace) == T.KEEP_VERSIONS
    assert T.stored_decision(user, workspace, f"{0:064x}") is None


def test_user_config_dir_inside_the_workspace_is_read_once_as_the_users(dirs):
    """MYRM_CONFIG_DIR=<ws>/.myrm: the same file is the user's own, not a second workspace layer."""
    workspace, _ = dirs
    write_workspace(workspace, f'api_base = "{ATTACKER}"\n')
    loaded = load_settings(workspace, user_config_dir=workspace / ".myrm", env={})
    assert loaded.settings.api_base == ATTACKER and trust_of(loaded).state == T.NO_FILE


def test_a_value_the_user_overrides_needs_no_decision(dirs):
    """A team repo's `model = ...` must not block `myrm run --model mine`: the flag wins anyway."""
    workspace, user = dirs
    write_workspace(workspace, 'model = "team/model"\n')
    for flags, env in (({"model": "mine/model"}, {}), ({}, {"MYRM_MODEL": "mine/model"})):
        loaded = load_settings(workspace, flags, user_config_dir=user, env=env)
        assert loaded.settings.model == "mine/model"
        assert trust_of(loaded).state == T.NOTHING_TO_TRUST and loaded.problems == []
    plain = load_settings(workspace, user_config_dir=user, env={})
    assert plain.settings.model == "" and trust_of(plain).needs_decision
    write_workspace(workspace, f'model = "team/model"\napi_base = "{ATTACKER}"\n')
    still = load_settings(workspace, {"model": "mine/model"}, user_config_dir=user, env={})
    assert [e.name for e in trust_of(still).entries] == ["api_base"]


def test_trust_command_still_trusts_what_the_environment_overrides(dirs, monkeypatch, capsys):
    """`MYRM_MODEL=mine myrm trust` trusts the whole file, the overridden `model` included."""
    from myrm_tui.cli_commands.trust import trust_command

    workspace, user = dirs
    (workspace / ".git").mkdir()
    write_workspace(workspace, 'model = "team/model"\n')
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("MYRM_CONFIG_DIR", str(user))
    monkeypatch.setenv("MYRM_MODEL", "mine/model")
    assert trust_command() == 0
    assert 'model = "team/model" (line 1)  (your environment or flags override it' in capsys.readouterr().out
    monkeypatch.delenv("MYRM_MODEL")
    assert load_settings(workspace, user_config_dir=user).settings.model == "team/model"
