"""The one model-name check (llm/models/check.py) every front end asks: `myrm run --model`,
`myrm models`, the settings screen, the picker and a fork. It names the model canonically, says
whether anyone serves it, what was probably meant, and which key variable its provider needs."""

from __future__ import annotations

from myrm_tui.llm.local.provider import local_available
from myrm_tui.llm.models import registry
from myrm_tui.llm.models.check import check_model, is_ready

SERVER = "http://127.0.0.1:8080/v1"


def test_a_typo_is_unknown_with_the_model_that_was_meant_first():
    check = check_model("gpt4o", env={})
    assert not check.known and not check.ready
    assert check.suggestions[0] == "openai/gpt-4o"
    assert check.problem is not None and "openai/gpt-4o" in check.problem and "provider/model" in check.problem
    near = check_model("openai/gpt-4o-mnii", env={})
    assert not near.known and near.suggestions[0] == "openai/gpt-4o-mini"
    assert check_model("foo/bar", env={}).suggestions == (), "no believable guess for an unrelated short name"


def test_a_known_bare_name_gets_its_provider_prefix_and_its_key_variable():
    check = check_model("gpt-4o", env={})
    assert check.known and check.name == "openai/gpt-4o" and check.provider == "openai"
    assert (check.key_needed, check.key_var, check.key_set, check.ready) == (True, "OPENAI_API_KEY", False, False)
    problem = check.key_problem()
    assert problem is not None and "OPENAI_API_KEY" in problem and "not set" in problem
    keyed = check_model("gpt-4o", env={"OPENAI_API_KEY": "sk-test"})
    assert keyed.ready and keyed.key_problem() is None
    assert check_model("gemini/gemini-2.5-pro", env={"GOOGLE_API_KEY": "k"}).ready, "litellm reads either variable"


def test_a_model_on_the_users_own_server_needs_no_key():
    declared = {"openai/llama3": {"api_base": SERVER, "context_window": 8192}}
    check = check_model("openai/llama3", declared, env={})
    assert check.known and check.ready and not check.key_needed and check.endpoint == SERVER
    main = check_model("openai/whatever-the-server-has", api_base=SERVER, env={})
    assert main.known and main.ready, "the api_base setting is where every main-model call goes"
    assert check_model("ollama/llama3", env={}).ready, "Ollama takes no key"


def test_embedded_and_unknown_embedded_models():
    if local_available():
        assert check_model("local/smollm2", env={}).ready
    missing = check_model("local/nope", env={})
    assert not missing.known and "no embedded model named local/nope" in (missing.problem or "")


def test_search_matches_loosely_and_names_models_as_model_takes_them():
    assert registry.search("gpt4o", limit=3)[0].name == "openai/gpt-4o"
    assert registry.search("Sonnet 4.5", limit=1)[0].name == "anthropic/claude-sonnet-4-5"
    names = [m.name for m in registry.search("deepseek-chat", limit=50)]
    assert names.count("deepseek/deepseek-chat") == 1 and "deepseek-chat" not in names


def test_ready_follows_the_check():
    own = registry.info("openai/llama3", {"openai/llama3": {"api_base": SERVER}})
    assert is_ready(own, {"openai/llama3": {"api_base": SERVER}}, env={})
    hosted = registry.info("openai/gpt-4o")
    assert not is_ready(hosted, env={}) and is_ready(hosted, env={"OPENAI_API_KEY": "k"})
