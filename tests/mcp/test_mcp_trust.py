"""A server entry is a command that runs: from a workspace file it waits for trust, is listed in
the trust dialog with the command it would run, and an edit to `.mcp.json` asks again.

Real files, the real loader and trust store; `myrm run` and the TUI dialog for the end-to-end
parts (a server that would create a marker file proves whether it ran)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from myrm_tui.cli_commands.common import CommandContext
from myrm_tui.cli_commands.trust import trust_prompt_for
from myrm_tui.mcp.connection import READY
from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.loader import load_settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.chat.screen import ChatScreen
from myrm_tui.tui.screens.trust import TrustScreen
from tests.mcp.mcp_helpers import SERVER, SIZE, connection_of, run_myrm, wait_until
from tests.trust_helpers import digest_of, trust_of


def mcp_json(workspace: Path, servers: dict) -> Path:
    path = workspace / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


def marker_server(marker: Path) -> dict:
    """A "server" whose command leaves a file behind: proof that the command ran."""
    return {
        "command": "sh",
        "args": ["-c", f"touch {marker}; exit 1"],
        "env": {"LD_PRELOAD": "/tmp/x.so", "KEY": "${OPENAI_API_KEY}"},
    }


def test_workspace_mcp_json_waits_for_trust_and_lists_the_command(workspace, config_dir, tmp_path):
    mcp_json(workspace, {"evil": marker_server(tmp_path / "pwned")})
    loaded = load_settings(workspace, user_config_dir=config_dir, env={})
    assert loaded.settings.mcp_servers == {}
    trust = trust_of(loaded)
    assert trust.needs_decision and trust.config_file == workspace / ".mcp.json"
    (entry,) = trust.entries
    assert entry.mcp_server == "evil"
    assert str(entry).startswith(".mcp.json mcpServers.evil command = \"sh -c 'touch ")
    # what the server gets is part of what the user trusts: the environment, references as written
    assert "(env: KEY=${OPENAI_API_KEY}, LD_PRELOAD=/tmp/x.so)" in str(entry)
    assert any("mcpServers.evil" in str(p) for p in loaded.problems)


def test_accepting_applies_the_servers_as_workspace_servers(workspace, config_dir, tmp_path):
    mcp_json(workspace, {"evil": marker_server(tmp_path / "pwned")})
    loaded = load_settings(workspace, user_config_dir=config_dir, env={}, accept_workspace=T.ACCEPT_ANY)
    config = loaded.settings.mcp_servers["evil"]
    assert config.scope == "workspace" and config.source == str(workspace / ".mcp.json")
    assert trust_of(loaded).state == T.ACCEPTED


def test_an_edit_to_mcp_json_after_trust_asks_again(workspace, config_dir, tmp_path):
    path = mcp_json(workspace, {"ok": {"command": "srv"}})
    first = load_settings(workspace, user_config_dir=config_dir, env={})
    T.record_trust(config_dir, workspace, digest_of(trust_of(first)))
    assert load_settings(workspace, user_config_dir=config_dir, env={}).settings.mcp_servers.keys() == {"ok"}
    servers = json.loads(path.read_text())["mcpServers"]
    servers["evil"] = marker_server(tmp_path / "pwned")
    mcp_json(workspace, servers)
    again = load_settings(workspace, user_config_dir=config_dir, env={})
    assert trust_of(again).needs_decision and again.settings.mcp_servers == {}


def test_adding_mcp_json_next_to_a_trusted_config_asks_again(workspace, config_dir):
    config = workspace / ".myrm" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "openai/gpt-4o"\n')
    trusted = trust_of(load_settings(workspace, user_config_dir=config_dir, env={}))
    # Decisions stored before MCP existed were keyed by the config file's own sha256: still valid.
    assert trusted.digest == hashlib.sha256(config.read_bytes()).hexdigest()
    T.record_trust(config_dir, workspace, digest_of(trusted))
    assert trust_of(load_settings(workspace, user_config_dir=config_dir, env={})).state == T.TRUSTED
    mcp_json(workspace, {"srv": {"command": "srv"}})
    loaded = load_settings(workspace, user_config_dir=config_dir, env={})
    assert trust_of(loaded).needs_decision
    assert loaded.settings.model == "", "nothing of the pair applies until the new pair is trusted"
    assert {e.name for e in trust_of(loaded).entries} == {"model", ".mcp.json mcpServers.srv command"}


def test_workspace_config_toml_servers_need_trust_too(workspace, config_dir):
    config = workspace / ".myrm" / "config.toml"
    config.parent.mkdir()
    config.write_text('theme = "textual-light"\n\n[mcp_servers.db]\ncommand = "db-mcp"\nargs = ["--rw"]\n')
    loaded = load_settings(workspace, user_config_dir=config_dir, env={})
    assert loaded.settings.mcp_servers == {} and loaded.settings.theme == "textual-light"
    (entry,) = trust_of(loaded).entries
    assert str(entry) == '[mcp_servers.db] command = "db-mcp --rw" (line 3)'


def test_user_servers_apply_without_any_trust(workspace, config_dir):
    (config_dir / "config.toml").write_text('[mcp_servers.time]\ncommand = "mcp-server-time"\n')
    (config_dir / "mcp.json").write_text('{"mcpServers": {"web": {"type": "http", "url": "https://x/mcp"}}}')
    loaded = load_settings(workspace, user_config_dir=config_dir, env={})
    assert set(loaded.settings.mcp_servers) == {"time", "web"}
    assert {c.scope for c in loaded.settings.mcp_servers.values()} == {"user"}
    assert trust_of(loaded).state == T.NO_FILE
    assert config_dir / "mcp.json" in loaded.files_found


def test_a_trusted_workspace_server_overrides_the_users_entry_of_the_same_name(workspace, config_dir):
    (config_dir / "config.toml").write_text('[mcp_servers.git]\ncommand = "user-git"\n')
    mcp_json(workspace, {"git": {"command": "repo-git"}})
    untrusted = load_settings(workspace, user_config_dir=config_dir, env={})
    assert untrusted.settings.mcp_servers["git"].command == "user-git"
    accepted = load_settings(workspace, user_config_dir=config_dir, env={}, accept_workspace=T.ACCEPT_ANY)
    assert accepted.settings.mcp_servers["git"].command == "repo-git"


def test_myrm_run_refuses_an_untrusted_server_and_never_runs_it(workspace, config_dir, tmp_path, script):
    marker = tmp_path / "pwned"
    mcp_json(workspace, {"evil": marker_server(marker)})
    result = run_myrm(workspace, config_dir, "run", "--model", script({"text": "hi"}), "hello")
    assert result.returncode == 2, result.stderr
    assert "mcpServers.evil" in result.stderr and "myrm trust" in result.stderr
    assert not marker.exists()


@pytest.mark.slow
def test_with_trust_the_server_runs_and_a_broken_one_is_a_warning_not_a_failure(
    workspace, config_dir, tmp_path, script
):
    marker = tmp_path / "pwned"
    keyless = {"command": "sh", "args": ["-c", f"touch {marker}; exit 1"]}
    mcp_json(workspace, {"evil": keyless, "needs_key": marker_server(tmp_path / "never")})
    result = run_myrm(workspace, config_dir, "run", "--trust", "--model", script({"text": "answered"}), "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "answered"
    assert marker.exists()
    assert "MCP server evil did not start" in result.stderr
    assert "MCP server needs_key did not start: ${OPENAI_API_KEY} in env.KEY is not set" in result.stderr
    assert not (tmp_path / "never").exists(), "a server whose variables are missing is never run"


async def test_the_trust_dialog_lists_the_server_and_trusting_starts_it(workspace, store, tmp_path, script):
    mcp_json(workspace, {"tests": {"command": sys.executable, "args": [str(SERVER), "stdio"]}})
    model = script({"text": "x"})
    flags = {"model": model}
    loaded = load_settings(workspace, flags)
    prompt = trust_prompt_for(CommandContext(workspace, loaded), flags)
    app = MyrmApp(workspace, loaded.settings, store=store, watch_themes=False, trust_prompt=prompt)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="trust dialog")
        listing = str(app.screen.query_one("#trust-listing", Static).render())
        assert listing.startswith(".mcp.json mcpServers.tests command = ")
        assert str(SERVER) in listing
        assert app.mcp.names() == [], "nothing from the file runs before the answer"
        await pilot.press("down", "enter")  # trust for this session
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat")
        await wait_until(
            pilot,
            lambda: (c := app.mcp.connection("tests")) is not None and c.state == READY,
            what="the trusted server to start",
        )
        assert "echo" in [t.name for t in connection_of(app.mcp, "tests").tools]
