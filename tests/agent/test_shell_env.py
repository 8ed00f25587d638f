"""Which variables a bash command may see: secrets out by name or value, everything else in."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from myrm_tui.agent.shell_env import SECRET_PARTS, command_env, looks_secret, mentioned, passthrough_names
from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS

EVERYDAY = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "PWD": "/w",
    "LANG": "C.UTF-8",
    "TERM": "xterm",
    "VIRTUAL_ENV": "/w/.venv",
    "JAVA_HOME": "/opt/jdk",
    "GOPATH": "/go",
    "NODE_OPTIONS": "--max-old-space-size=4096",
    "TIKTOKEN_CACHE_DIR": "/c",
    "KEYMAP": "us",
    "MONKEYPATCH": "1",
    "SSH_TTY": "/dev/pts/1",
    "DATABASE_URL": "postgres://localhost/app",
    "PYTHONPATH": "/w",
}
SECRET = {
    "OPENAI_API_KEY": "sk-1",
    "GITHUB_TOKEN": "ghp",
    "AWS_SECRET_ACCESS_KEY": "a",
    "AWS_SESSION_TOKEN": "t",
    "PGPASSWORD": "p",
    "MYSQL_PWD": "p",
    "NPM_TOKEN": "n",
    "HF_TOKEN": "h",
    "SSH_AUTH_SOCK": "/tmp/agent",
    "DJANGO_SECRET_KEY": "d",
    "SENTRY_AUTH_TOKEN": "s",
    "REDIS_URL": "redis://:hunter2@cache:6379/0",
    "PRIVATE_KEY": "k",
    "DOCKER_PASSWORD": "x",
    "app.secret": "y",
}


def test_everyday_variables_pass_and_secrets_do_not():
    built = command_env({**EVERYDAY, **SECRET})
    assert {k: built.env[k] for k in EVERYDAY} == EVERYDAY
    assert not set(SECRET) & set(built.env)
    assert built.withheld == tuple(sorted(SECRET))


def test_every_provider_key_is_withheld_whatever_its_name():
    for _, var, _ in PROVIDER_KEYS:
        assert looks_secret(var, "x")


def test_commands_never_wait_for_a_pager_or_a_prompt():
    env = command_env({"PAGER": "less", "GIT_PAGER": "less"}).env
    assert (env["PAGER"], env["GIT_PAGER"], env["GIT_TERMINAL_PROMPT"]) == ("cat", "cat", "0")


def test_passthrough_names_are_parsed_strictly():
    assert passthrough_names(" GITHUB_TOKEN,NPM_TOKEN  HF_TOKEN,, 1BAD, $X, a-b ") == {
        "GITHUB_TOKEN",
        "NPM_TOKEN",
        "HF_TOKEN",
    }
    built = command_env(SECRET, passthrough_names("GITHUB_TOKEN"))
    assert built.env["GITHUB_TOKEN"] == "ghp" and "GITHUB_TOKEN" not in built.withheld


def test_only_names_the_command_really_uses_are_reported():
    names = ("GITHUB_TOKEN", "OPENAI_API_KEY")
    assert mentioned('curl -H "Authorization: $GITHUB_TOKEN" x', names) == ["GITHUB_TOKEN"]
    assert mentioned("echo $MY_GITHUB_TOKEN_COPY", names) == []


_PLAIN_PARTS = st.sampled_from(
    [
        "APP",
        "HOME",
        "PATH",
        "CACHE",
        "DIR",
        "MODE",
        "LEVEL",
        "URL",
        "HOST",
        "PORT",
        "USER",
        "NAME",
        "CONFIG",
        "LOG",
        "KEYBOARD",
        "TIKTOKEN",
        "TOKENIZER",
        "KEYMAP",
    ]
)


@given(
    st.lists(_PLAIN_PARTS, min_size=1, max_size=4),
    st.sampled_from(sorted(SECRET_PARTS - {"PWD"})),
    st.integers(min_value=0, max_value=4),
)
def test_a_secret_word_anywhere_in_a_name_withholds_it(parts, word, where):
    plain = "_".join(parts)
    assert not looks_secret(plain, "value")
    parts.insert(min(where, len(parts)), word)
    assert looks_secret("_".join(parts), "value")
    assert looks_secret("_".join(parts).lower(), "value")
