"""Server entries in both shapes users bring (Codex TOML, Claude Code `.mcp.json`), `${VAR}`
expansion, and the `mcp__server__tool` names providers must accept."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.mcp.expand import MissingVariable, expanded
from myrm_tui.mcp.names import MAX_NAME_CHARS, tool_name, unique_names
from myrm_tui.settings.sections.mcp_servers import HTTP, STDIO, server_from_toml, servers_from_mcp_json

PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_codex_table_with_every_key():
    config, problems = server_from_toml(
        "git",
        {
            "command": "uvx",
            "args": ["mcp-server-git", "--repository", "."],
            "env": {"GIT_DIR": ".git"},
            "cwd": "sub",
            "startup_timeout_sec": 30,
            "tool_timeout_sec": 5.5,
            "enabled": True,
            "enabled_tools": ["git_status"],
            "disabled_tools": ["git_push"],
        },
        source="cfg",
        scope="user",
    )
    assert problems == []
    assert config is not None and config.transport == STDIO
    assert config.args == ("mcp-server-git", "--repository", ".") and config.env == (("GIT_DIR", ".git"),)
    assert (config.startup_timeout, config.tool_timeout, config.cwd) == (30.0, 5.5, "sub")
    assert config.offers("git_status") and not config.offers("git_push") and not config.offers("git_log")


def test_remote_table_with_headers_and_token_variable():
    config, problems = server_from_toml(
        "gh", {"url": "https://mcp.example.com/mcp", "http_headers": {"X-Team": "a"}, "bearer_token_env_var": "GH"}
    )
    assert problems == [] and config is not None and config.transport == HTTP
    assert config.headers == (("X-Team", "a"),)
    assert "Authorization from $GH" in config.summary() and "X-Team" in config.summary()


@pytest.mark.parametrize(
    "table, fragment",
    [
        ({}, "needs `command`"),
        ({"command": "a", "url": "http://x"}, "not both"),
        ({"url": "ftp://x"}, "must start with http"),
        ({"command": 3}, "must be text"),
    ],
)
def test_unusable_tables_are_skipped_with_a_reason(table, fragment):
    config, problems = server_from_toml("s", table)
    assert config is None
    assert any(fragment in p.message and "[mcp_servers.s]" in p.message for p in problems)


def test_bad_fields_are_named_and_the_server_still_loads():
    config, problems = server_from_toml(
        "s", {"command": "srv", "args": "not-a-list", "env": {"A": 1}, "startup_timeout_sec": 0, "typo": True}
    )
    assert config is not None and config.args == () and config.env == () and config.startup_timeout is None
    text = " ".join(p.message for p in problems)
    for fragment in (
        "`args` must be a list",
        "`env.A` must be text",
        "`startup_timeout_sec` must be",
        "unknown key `typo`",
    ):
        assert fragment in text


def test_claude_code_json_shapes():
    configs, problems = servers_from_mcp_json(
        """{"mcpServers": {
        "local": {"command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "${TOKEN}"}},
        "remote": {"type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${T}"}},
        "typed": {"type": "stdio", "command": "srv"},
        "off": {"command": "srv", "disabled": true},
        "old": {"type": "sse", "url": "https://x.example/sse"}}}""",
        source=".mcp.json",
        scope="workspace",
    )
    by_name = {c.name: c for c in configs}
    assert set(by_name) == {"local", "remote", "typed", "off"}
    assert by_name["remote"].transport == HTTP and by_name["typed"].transport == STDIO
    assert by_name["off"].enabled is False
    assert all(c.scope == "workspace" and c.source == ".mcp.json" for c in configs)
    (problem,) = problems
    assert problem.server == "old" and "SSE transport" in problem.message


@pytest.mark.parametrize("text", ["not json", "[]", '{"servers": {}}', '{"mcpServers": []}'])
def test_json_files_that_are_not_an_mcp_config(text):
    configs, problems = servers_from_mcp_json(text)
    assert configs == [] and len(problems) == 1 and problems[0].server is None


def test_secret_values_never_appear_in_the_summary():
    configs, _ = servers_from_mcp_json(
        '{"mcpServers": {"s": {"command": "srv", "env": {"API_TOKEN": "sk-live-123"}},'
        '"h": {"type": "http", "url": "https://x/mcp", '
        '"headers": {"Authorization": "Bearer sk-live-456"}}}}'
    )
    summaries = " ".join(c.summary() for c in configs)
    assert "API_TOKEN" in summaries and "Authorization" in summaries
    assert "sk-live" not in summaries


def test_expansion_fills_references_and_defaults():
    configs, _ = servers_from_mcp_json(
        '{"mcpServers": {"s": {"command": "${BIN:-srv}", "args": ["--k", "${KEY}"],"env": {"T": "x${KEY}y"}}}}'
    )
    (config,) = configs
    done = expanded(config, {"KEY": "v1"})
    assert done.command == "srv" and done.args == ("--k", "v1") and done.env == (("T", "xv1y"),)
    assert config.args == ("--k", "${KEY}"), "the stored entry keeps the reference, never the secret"


def test_a_missing_variable_fails_with_its_name():
    config, _ = server_from_toml("h", {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}})
    assert config is not None
    with pytest.raises(MissingVariable, match=r"\$\{GH_TOKEN\} in headers.Authorization"):
        expanded(config, {})


def test_bearer_token_variable_becomes_the_authorization_header():
    config, _ = server_from_toml(
        "h", {"url": "https://x/mcp", "bearer_token_env_var": "GH", "headers": {"authorization": "stale"}}
    )
    assert config is not None
    done = expanded(config, {"GH": "tok"})
    assert dict(done.headers) == {"Authorization": "Bearer tok"}
    with pytest.raises(MissingVariable, match="GH"):
        expanded(config, {})


def test_tool_names_follow_the_claude_code_convention():
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"


@given(st.text(min_size=0, max_size=80), st.text(min_size=0, max_size=120))
def test_every_name_is_one_a_provider_accepts(server, tool):
    assert PROVIDER_NAME.match(tool_name(server, tool))
    assert len(tool_name(server, tool)) <= MAX_NAME_CHARS


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "a.b", "a_b", "x" * 70]), st.text(alphabet="ab._-", min_size=1, max_size=70)),
        max_size=12,
    )
)
def test_distinct_tools_never_share_a_prompt_name(pairs):
    names = unique_names(pairs)
    assert len(set(names.values())) == len(set(pairs))
    assert all(PROVIDER_NAME.match(name) for name in names.values())
    assert unique_names(reversed(pairs)) == names, "the names must not depend on listing order"
