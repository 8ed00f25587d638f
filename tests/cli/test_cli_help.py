"""`--help` of every command, and the model names `myrm models` prints."""

from __future__ import annotations

import pytest

from myrm_tui.llm.models.names import prefixed_name

HELP_OF = [
    (),
    ("run",),
    ("sessions",),
    ("sessions", "list"),
    ("sessions", "export"),
    ("sessions", "recover"),
    ("models",),
    ("trust",),
    ("doctor",),
    ("replay",),
]


@pytest.mark.parametrize("command", HELP_OF, ids=lambda c: " ".join(c) or "myrm")
def test_help_shows_flags_without_a_value_type(myrm, command):
    result = myrm(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "<bool>" not in result.stdout, "a flag takes no value; its help must not suggest one"
    assert "--help  " in result.stdout or "--help\n" in result.stdout


def test_run_help_names_its_flags_and_values(myrm):
    out = myrm("run", "--help").stdout
    for flag in ("--continue", "--json", "--compact", "--trust", "--fork"):
        line = next(line for line in out.splitlines() if flag in line)
        assert "<" not in line.split(flag, 1)[1].split("  ")[0], line  # nothing after the flag name
    assert "--max-steps N" in out and "--image PATH" in out


def test_models_prints_names_as_typed_on_model(myrm):
    result = myrm("models", "--search", "claude-opus-4-5", "--limit", "2")
    names = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert names and all(name.startswith(("anthropic/", "bedrock/", "vertex_ai/")) or "/" in name for name in names)
    assert "anthropic/claude-opus-4-5" in names
    assert "more — use --limit" in result.stderr
    prefixed = myrm("models", "--search", "openai/gpt-4o", "--limit", "50")
    shown = [line.split()[0] for line in prefixed.stdout.splitlines()[1:]]
    assert "openai/gpt-4o" in shown, "the README's spelling finds the model"
    twins = myrm("models", "--search", "deepseek-chat", "--limit", "50")
    listed = [line.split()[0] for line in twins.stdout.splitlines()[1:]]
    # litellm's map has both "deepseek-chat" and "deepseek/deepseek-chat": one model, one row.
    assert listed.count("deepseek/deepseek-chat") == 1 and "deepseek-chat" not in listed


def test_prefixed_name_keeps_existing_prefixes():
    assert prefixed_name("gpt-4o", "openai") == "openai/gpt-4o"
    assert prefixed_name("anthropic.claude-x", "bedrock_converse") == "bedrock/anthropic.claude-x"
    assert prefixed_name("gemini-pro", "vertex_ai-language-models") == "vertex_ai/gemini-pro"
    assert prefixed_name("azure/o1", "azure") == "azure/o1"
    assert prefixed_name("my-model", "unknown") == "my-model"
