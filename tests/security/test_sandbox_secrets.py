"""A sandboxed command reads no credential store, history, other workspace's store or password
hash, and its environment holds no secret, whatever shape the secret has.

The stores live in a HOME under /var/tmp (outside the workspace, seen by the sandbox as a real
HOME would be); each holds a unique marker that must not appear in anything the command prints.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from myrm_tui.agent.shell_env import command_env
from myrm_tui.settings.config_files.loader import load_settings
from tests.security.sandbox_calls import bash, turn

MARK = "myrm-secret-7d1c"
STORES = (
    ".ssh/id_rsa",
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".gnupg/private-keys-v1.d/key",
    ".bash_history",
    ".zsh_history",
    ".npmrc",
    "projects/other/.myrm/sessions.db",
)


@pytest.fixture
def home(monkeypatch) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="myrm-home-", dir="/var/tmp"))
    for index, name in enumerate(STORES):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{MARK}-{index}\n")
    monkeypatch.setenv("HOME", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def workspace(home: Path) -> Path:
    ws = home / "projects" / "mine"
    ws.mkdir(parents=True)
    return ws


async def test_a_yolo_model_reads_no_credential_store(home, workspace, tmp_path):
    commands = [f"cat ~/{name}" for name in STORES] + ["cat /etc/shadow /etc/gshadow", "grep -r . ~ 2>/dev/null"]
    log = await turn(workspace, tmp_path, commands)
    assert len(log.finished) == len(commands)
    leaked = [f.content for f in log.finished if MARK in f.content]
    assert leaked == []
    shadow = log.finished[len(STORES)].content
    assert "root:" not in shadow, shadow  # readable as root on the host, empty in the sandbox


async def test_the_files_stay_where_they_are_and_tools_still_find_home(home, workspace):
    result = await bash(workspace, "ls -a ~ ~/.ssh && test -f ~/.netrc && echo netrc-empty:$(wc -c < ~/.netrc)")
    assert "netrc-empty:0" in result.content, result.content
    assert (home / ".ssh" / "id_rsa").read_text().startswith(MARK)  # nothing changed on the host


async def test_sandbox_hide_adds_paths_and_un_hides_defaults(home, workspace):
    (home / "vault.txt").write_text(f"{MARK}-vault\n")
    setting = f"{home}/vault.txt, !~/.npmrc"
    result = await bash(workspace, "cat ~/vault.txt ~/.npmrc", sandbox_hide=setting)
    assert f"{MARK}-vault" not in result.content
    assert f"{MARK}-{STORES.index('.npmrc')}" in result.content  # the user un-hid it


def test_a_workspace_file_cannot_un_hide_even_when_trusted(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".myrm").mkdir(parents=True)
    (workspace / ".myrm" / "config.toml").write_text('sandbox_hide = "!~/.ssh, !~/.aws"\n')
    user = tmp_path / "user"
    user.mkdir()
    loaded = load_settings(workspace, user_config_dir=user, env={}, accept_workspace="any")
    assert loaded.settings.sandbox_hide == ""
    assert any("`sandbox_hide` is ignored" in p.message for p in loaded.problems)


SECRET_SHAPES = {
    "SENTRY_DSN": "https://0123456789abcdef0123456789abcdef@o0.ingest.sentry.io/42",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
    "APP_SECRETKEY": "not-a-url",
    "AWS_SESSIONTOKEN": "FwoGZXIvYXdzEJr",
    "DJANGO_ACCESSKEY": "x1",
    "DATABASE_URL": "postgresql://app:p%40ss/word@db.internal:5432/app",
    "JDBC_URL": "jdbc:postgresql://app:hunter2@db.internal/app",
    "MAIN_DB": "Server=db;Database=app;User Id=app;Password=hunter2;",
    "PG_CONN_STRING": "host=db dbname=app",
    "NOTIFY": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
    "CI_DEPLOY": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
}
PLAIN = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "PIP_INDEX_URL": "https://pypi.org/simple",
    "GIT_REMOTE": "git@github.com:org/repo.git",
    "HOTKEY": "ctrl+k",
    "TOKENIZERS_PARALLELISM": "false",
    "API_URL": "https://api.example.com/v1",
    "KEYBOARD": "us",
    "PWD": "/home/u/src",
}


def test_the_environment_filter_knows_secret_names_and_values():
    built = command_env({**SECRET_SHAPES, **PLAIN})
    assert sorted(built.withheld) == sorted(SECRET_SHAPES)
    for name in PLAIN:
        assert built.env[name] == PLAIN[name]


async def test_no_secret_shape_reaches_a_command(workspace, monkeypatch):
    for name, value in SECRET_SHAPES.items():
        monkeypatch.setenv(name, value)
    result = await bash(workspace, "env")
    assert [n for n, v in SECRET_SHAPES.items() if v in result.content] == []
    assert os.environ["DATABASE_URL"] == SECRET_SHAPES["DATABASE_URL"]  # ours, untouched
