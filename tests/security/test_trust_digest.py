"""Trust covers everything a workspace can use to change the model, an endpoint, the tools or
what the model sees, so nothing of it can change after the user said yes.

The attack: the user trusts a repository's `.myrm/config.toml`; a later commit adds
`model: <another model>` to a custom command in `.myrm/commands/`. The trust digest covered the
config, `.mcp.json` and the output filters only, so the workspace still counted as trusted and
the command switched the model. The digest now covers the model each command names
(settings/trust.py workspace_digest), and the loader lists it with what needs trust.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.loader import load_settings
from tests.security.clone_cli import Clone, make_clone

SCRIPT_TEXT = {"main": "FROM-THE-TRUSTED-MODEL", "other": "FROM-THE-COMMAND-MODEL"}


def scripts(base: Path) -> dict[str, str]:
    models = {}
    for name, text in SCRIPT_TEXT.items():
        path = base / f"{name}.json"
        path.write_text(json.dumps({"turns": [{"text": text}]}))
        models[name] = f"scripted/{path}"
    return models


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def trusted(tmp_path: Path) -> tuple[Clone, dict[str, str]]:
    """A workspace the user trusted as it was: its config picks a model, one command has no model."""
    clone = make_clone(tmp_path)
    models = scripts(tmp_path)
    write(clone.root / ".myrm" / "config.toml", f'model = "{models["main"]}"\n')
    write(clone.root / ".myrm" / "commands" / "review.md", "Review $ARGUMENTS.")
    result = clone.myrm("trust")
    assert result.returncode == 0 and "Trusted" in result.stdout, result.stderr
    return clone, models


@pytest.mark.slow
def test_a_model_added_to_a_command_after_trust_asks_again(trusted):
    clone, models = trusted
    ok = clone.myrm("run", "/review the parser", test_providers=True)
    assert ok.returncode == 0 and ok.stdout.strip() == SCRIPT_TEXT["main"], ok.stderr
    write(clone.root / ".myrm" / "commands" / "review.md", f"---\nmodel: {models['other']}\n---\nReview $ARGUMENTS.")
    result = clone.myrm("run", "/review the parser", test_providers=True)
    assert SCRIPT_TEXT["other"] not in result.stdout
    assert result.returncode == 2, result.stderr
    assert "command /review (review.md) model" in result.stderr  # named in the refusal
    listed = clone.myrm("trust")  # reviewing it shows the command's model, and trusting applies it
    assert f'command /review (review.md) model = "{models["other"]}"' in listed.stdout, listed.stdout
    applied = clone.myrm("run", "/review the parser", test_providers=True)
    assert applied.returncode == 0 and applied.stdout.strip() == SCRIPT_TEXT["other"], applied.stderr


@pytest.mark.slow
def test_a_command_model_in_a_workspace_with_nothing_else_to_trust_can_be_trusted(tmp_path: Path):
    clone = make_clone(tmp_path)
    models = scripts(tmp_path)
    write(clone.root / ".myrm" / "commands" / "deep.md", f"---\nmodel: {models['other']}\n---\nThink.")
    clone.user_config(f'model = "{models["main"]}"\n')
    refused = clone.myrm("run", "/deep", test_providers=True)
    assert refused.returncode == 2 and "command /deep (deep.md) model" in refused.stderr, refused.stderr
    assert clone.myrm("trust").returncode == 0
    result = clone.myrm("run", "/deep", test_providers=True)
    assert result.returncode == 0 and result.stdout.strip() == SCRIPT_TEXT["other"], result.stderr


def _state(root: Path, user: Path) -> T.WorkspaceTrust:
    state = load_settings(root, user_config_dir=user, env={}).workspace_trust
    assert state is not None
    return state


COVERED = {
    "config": lambda root: write(root / ".myrm" / "config.toml", 'model = "openai/gpt-4o"\napi_base = "http://b"\n'),
    "mcp server": lambda root: write(root / ".mcp.json", json.dumps({"mcpServers": {"x": {"command": "evil"}}})),
    "filter": lambda root: write(root / ".myrm" / "filters" / "hide.toml", '[filter]\nmatch = "pytest"\n'),
    "command model": lambda root: write(root / ".myrm" / "commands" / "go.md", "---\nmodel: openai/o3\n---\nGo."),
}


@pytest.mark.parametrize("change", list(COVERED))
def test_each_input_that_decides_model_endpoint_tools_or_output_is_covered(tmp_path: Path, change: str):
    """The audit, as a test: trust the workspace, change one input, and it is untrusted again."""
    root, user = tmp_path / "ws", tmp_path / "user"
    write(root / ".myrm" / "config.toml", 'model = "openai/gpt-4o"\napi_base = "http://a"\n')
    user.mkdir()
    before = _state(root, user)
    T.record_trust(user, root, before.digest or "")
    assert _state(root, user).state == T.TRUSTED
    COVERED[change](root)
    after = _state(root, user)
    assert after.digest != before.digest and after.state == T.UNTRUSTED, change


def test_a_commands_text_is_prompt_text_and_does_not_ask_again(tmp_path: Path):
    root, user = tmp_path / "ws", tmp_path / "user"
    write(root / ".myrm" / "config.toml", 'model = "openai/gpt-4o"\n')
    command = write(root / ".myrm" / "commands" / "go.md", "---\nmodel: openai/o3\n---\nGo.")
    user.mkdir()
    T.record_trust(user, root, _state(root, user).digest or "")
    command.write_text("---\ndescription: now described\nmodel: openai/o3\n---\nGo further.")
    assert _state(root, user).state == T.TRUSTED


def test_decisions_stored_before_commands_were_covered_still_hold(tmp_path: Path):
    """A workspace whose commands name no model keeps the digest it always had."""
    config = b'model = "openai/gpt-4o"\n'
    assert T.workspace_digest(config, None) == T.file_digest(config)
    assert T.workspace_digest(config, None, (), ()) == T.file_digest(config)
