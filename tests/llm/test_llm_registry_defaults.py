"""Model registry (litellm's bundled map + config overrides) and the default-model choice."""

from __future__ import annotations

import json

from myrm_tui.llm.models import defaults, provider_keys, registry
from myrm_tui.llm.models.info import CONSERVATIVE_WINDOW


def test_known_model_fields_come_from_litellm():
    info = registry.info("gpt-4o")
    assert info.known and info.warning is None
    assert info.context_window == 128_000
    assert info.supports_tools and info.supports_vision and info.provider == "openai"
    assert info.input_cost_per_token > 0 and info.output_cost_per_token > info.input_cost_per_token
    assert registry.info("openai/gpt-4o").context_window == 128_000


def test_provider_prefixed_name_finds_bare_registry_entry():
    info = registry.info("anthropic/claude-sonnet-4-5")
    assert info.known and info.provider == "anthropic" and info.context_window >= 200_000
    assert info.supports_prompt_caching and info.cache_read_cost_per_token > 0


def test_unknown_custom_endpoint_gets_conservative_window_and_warning():
    for model in ("openai/my-finetune", "hosted_vllm/qwen-local", "lm_studio/some-model"):
        info = registry.info(model)
        assert not info.known
        assert info.context_window == CONSERVATIVE_WINDOW
        assert info.max_output_tokens <= info.context_window
        assert info.warning is not None
        assert model in info.warning and "context_window" in info.warning


def test_overrides_are_applied_on_top():
    overrides = {
        "openai/my-finetune": {
            "context_window": 32_768,
            "api_base": "http://127.0.0.1:8000/v1",
            "supports_tools": False,
            "unknown_key": 1,
        }
    }
    info = registry.info("openai/my-finetune", overrides)
    assert (info.context_window, info.api_base, info.supports_tools) == (32_768, "http://127.0.0.1:8000/v1", False)
    assert info.warning is None, "a declared window silences the warning"
    assert not info.known
    small = registry.info("gpt-4o", {"gpt-4o": {"context_window": 1000}})
    assert small.context_window == 1000 and small.max_output_tokens <= 1000
    assert registry.info("gpt-4o", {"other": {"context_window": 5}}).context_window == 128_000


def test_scripted_window_comes_from_the_script(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"context_window": 4000, "turns": []}))
    info = registry.info(f"scripted/{path}")
    assert info.context_window == 4000 and info.supports_tools
    assert registry.info(f"scripted/{tmp_path / 'missing.json'}").context_window == 128_000


def test_search_finds_claude_chat_models():
    hits = registry.search("CLAUDE", limit=20)
    assert 0 < len(hits) <= 20
    assert all("claude" in h.name.lower() for h in hits)
    assert hits[0].name.startswith("anthropic/claude"), "named as --model takes it; the vendor's own first"
    assert registry.search("definitely-not-a-model-xyz") == []


def test_default_model_uses_first_keyed_provider():
    model = defaults.default_model({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    assert model is not None and model.startswith("anthropic/")
    assert registry.info(model).known and registry.info(model).supports_tools
    assert (defaults.default_model({"OPENAI_API_KEY": "k"}) or "").startswith("openai/")
    assert (defaults.default_model({"GEMINI_API_KEY": "k"}) or "").startswith("gemini/")


def test_default_model_is_deterministic_for_every_provider():
    for provider, var, prefix in provider_keys.PROVIDER_KEYS:
        picks = {defaults.default_model({var: "k"}) for _ in range(2)}
        assert len(picks) == 1
        (pick,) = picks
        assert pick is not None and pick.startswith(prefix), (provider, pick)


def test_empty_env_falls_back_to_local_or_none():
    from myrm_tui.llm.local.provider import local_available

    expected = "local/smollm2" if local_available() else None
    assert defaults.default_model({}) == expected
    assert defaults.default_model({"ANTHROPIC_API_KEY": "   "}) == expected, "blank key is no key"


def test_provider_key_status_names_only():
    status = provider_keys.provider_key_status({"GROQ_API_KEY": "gsk_secret_value"})
    assert ("groq", "GROQ_API_KEY", True) in status
    assert ("anthropic", "ANTHROPIC_API_KEY", False) in status
    assert "gsk_secret_value" not in repr(status)
    assert "myrm doctor" in defaults.ONBOARDING_MESSAGE
