"""Model names on the command line go through the one model-name check (llm/models/check.py):
`myrm run --model` refuses a name nobody serves with what was meant, and the hint it gives
(`myrm models --search …`) finds that model."""

from __future__ import annotations

import json


def test_run_with_a_typo_names_the_model_that_was_meant_and_its_search_finds_it(myrm):
    result = myrm("run", "--model", "gpt4o", "hello")
    assert result.returncode == 2
    assert "openai/gpt-4o" in result.stderr and "LLM Provider NOT provided" not in result.stderr
    hint = result.stderr.split("`myrm models --search ", 1)[1].split("`", 1)[0]
    listed = myrm("models", "--search", hint, "--limit", "3")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[0] == "openai/gpt-4o", "the hint finds the model"


def test_models_marks_ready_by_the_providers_key_and_declared_servers(myrm):
    (myrm.config_dir / "config.toml").write_text(
        '[models."openai/llama3"]\napi_base = "http://127.0.0.1:9/v1"\ncontext_window = 8192\n', encoding="utf-8"
    )
    rows = json.loads(myrm("models", "--search", "llama3", "--json", "--limit", "200").stdout)
    own = next(r for r in rows if r["name"] == "openai/llama3")
    assert own["ready"], "a model on the user's own server needs no key"
    hosted = json.loads(myrm("models", "--search", "gpt4o", "--json", "--limit", "1").stdout)
    assert hosted[0]["name"] == "openai/gpt-4o" and not hosted[0]["ready"]
    keyed = myrm("models", "--search", "gpt4o", "--json", "--limit", "1", env={"OPENAI_API_KEY": "k"})
    assert json.loads(keyed.stdout)[0]["ready"]
