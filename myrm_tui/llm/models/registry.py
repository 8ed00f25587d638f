"""What we know about a model: window, output cap, tool/vision/cache support, prices.

Source of truth is litellm's bundled model map (read from its file without importing litellm:
llm/models/litellm_map.py), with the user's per-model config overrides on top.
Models litellm does not know (custom endpoints: `openai/<name>` + api_base, vLLM, LM Studio)
never crash anything: they get CONSERVATIVE_WINDOW, `known=False` and a warning telling the
user how to declare the real window.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from typing import Any

from myrm_tui.llm.models.info import CONSERVATIVE_MAX_OUTPUT, CONSERVATIVE_WINDOW, ModelInfo
from myrm_tui.settings.sections.model_overrides import MODEL_OVERRIDE_TYPES

# ModelInfo fields a config override may set (config keys are the field names); the settings
# schema owns the list, since the loader checks `[models."NAME"]` tables before any model is known.
OVERRIDABLE_FIELDS = tuple(MODEL_OVERRIDE_TYPES)

# Providers whose model names embed another vendor's name ("openrouter/anthropic/claude-x"):
# their prices differ, but the window and capabilities are the vendor's.
_ROUTER_PREFIXES = ("openrouter",)


def _model_cost() -> dict[str, dict[str, Any]]:
    from myrm_tui.llm.models.litellm_map import load_model_map

    return load_model_map()


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
        from myrm_tui.llm.local import provider as local_provider

        return ModelInfo(
            name=model,
            provider="local",
            context_window=local_provider.LOCAL_CONTEXT_WINDOW,
            max_output_tokens=local_provider.LOCAL_DEFAULT_MAX_TOKENS,
            supports_tools=False,
        )
    if model.startswith("scripted/"):
        from myrm_tui.llm.fake_providers import scripted
        from myrm_tui.llm.fake_providers import switch as test_providers

        window, vision = scripted.DEFAULT_CONTEXT_WINDOW, False
        try:
            if test_providers.enabled():  # off: the script is never read (the call refuses)
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
        from myrm_tui.llm.fake_providers import replay_summarizers

        window = replay_summarizers.CONTEXT_WINDOW
        return ModelInfo(
            name=model,
            provider="replay-summarizer",
            context_window=window,
            max_output_tokens=min(8192, window),
            supports_tools=False,
        )
    return None


def _map_entry(model: str) -> Mapping[str, Any] | None:
    costs = _model_cost()
    for key in _candidates(model):
        entry = costs.get(key)
        if isinstance(entry, Mapping) and _entry_matches(model, key, entry):
            return entry
    return None


def in_map(model: str) -> bool:
    """True when the bundled map describes `model` (no litellm import)."""
    return _map_entry(model) is not None


@functools.lru_cache(maxsize=512)
def _registry_info(model: str, ask_litellm: bool = True) -> ModelInfo:
    entry = _map_entry(model)
    if entry is not None:
        return dataclasses.replace(_from_entry(model, entry), name=model)
    from myrm_tui.llm.models.litellm_map import litellm_may_know

    if not ask_litellm or not litellm_may_know(model):
        return _unknown(model)
    # litellm's own lookup knows model families newer than the map (its generalization rules: an
    # unmapped Claude id, Vertex's `@version` and Bedrock's regional spellings); it costs the
    # litellm import, so only a name the map has no row for and a rule may cover gets here.
    try:
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
    """ModelInfo for `model`, with `overrides[model]` (config values) applied on top. A model
    declared with its own api_base is the user's server: its facts are the declaration and the
    map, never litellm's guesses for a hosted model of the same name (and no litellm import)."""
    override = dict((overrides or {}).get(model) or {})
    base = _special(model) or _registry_info(model, ask_litellm=not override.get("api_base"))
    changes = {k: v for k, v in override.items() if k in OVERRIDABLE_FIELDS and v is not None}
    if not changes:
        return base
    if "context_window" in changes and not base.known:
        changes["warning"] = None  # the user declared the window: nothing left to warn about
    if "max_output_tokens" in changes:
        changes["max_output_declared"] = True
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
    from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS, is_set, key_vars

    env = os.environ if env is None else env
    return {provider for provider, _var, _ in PROVIDER_KEYS if any(is_set(env, v) for v in key_vars(provider))}


def own_models(overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """Models that run without a provider key: the installed embedded ones, and every model the
    user declared in config (a local server's model under [models."X"])."""
    from myrm_tui.llm.local.provider import local_model_names

    return [*local_model_names(), *sorted(name for name in (overrides or {}) if name not in local_model_names())]


@functools.lru_cache(maxsize=1)
def _listed_chat_models() -> tuple[tuple[str, str, Mapping[str, Any]], ...]:
    """(name as `--model` takes it, map key, entry) of every chat model, each model once: a bare
    map key gets its provider's prefix ("gpt-4o" -> "openai/gpt-4o"), and a bare key whose
    prefixed twin is in the map too ("deepseek-chat" and "deepseek/deepseek-chat") is one row."""
    from myrm_tui.llm.models.names import prefixed_name

    seen: set[str] = set()
    rows = []
    for key, entry in chat_models():
        shown = prefixed_name(key, str(entry.get("litellm_provider") or ""))
        if shown not in seen:
            seen.add(shown)
            rows.append((shown, key, entry))
    return tuple(rows)


def listed_names(overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """Every model name `myrm models` can list: the embedded and declared ones, then the map's."""
    own = own_models(overrides)
    return [*own, *(shown for shown, _key, _entry in _listed_chat_models() if shown not in own)]


def search(
    query: str,
    limit: int = 50,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
) -> list[ModelInfo]:
    """Models matching `query`, named as `--model` takes them ("openai/gpt-4o"; a model declared
    in config keeps its declared name). Matching is llm/name_match's: the text as typed, then its
    letters and digits only ("gpt4o" finds "openai/gpt-4o"), and near misses when neither finds
    anything. Models that can run now come first (the embedded model, models declared in config,
    then those of providers whose key is set); then the better match; then names whose model
    part starts with the query; then shorter names (the provider's own entry before resellers'
    copies), then by name."""
    from myrm_tui.llm.models.name_match import CLOSE, closeness, last_part, match_quality

    needle = query.strip().lower()
    ready = ready_providers(env)
    own = own_models(overrides)

    candidates = [(0, name, name, None) for name in own] + [
        (1 if entry.get("litellm_provider") in ready else 2, shown, key, entry)
        for shown, key, entry in _listed_chat_models()
        if shown not in own and key not in own
    ]

    def matches(near_misses: bool) -> list[tuple[int, int, float, int, str, ModelInfo]]:
        found = []
        for group, shown, key, entry in candidates:
            quality = match_quality(needle, shown, near_misses=near_misses)
            if quality is None and "/" not in needle:
                quality = match_quality(needle, key, near_misses=near_misses)
            if quality is None:
                continue
            # Where the model part starts with the query ranks first; among near misses, the closer.
            place = key.lower().find(last_part(needle)) if quality != CLOSE else -closeness(needle, shown)
            model = info(shown, overrides) if entry is None else _from_entry(shown, entry)
            found.append((group, quality, max(place, 0) if quality != CLOSE else place, len(key), shown, model))
        return found

    hits = matches(near_misses=False) or matches(near_misses=True)  # near misses only when nothing matches
    hits.sort(key=lambda hit: hit[:5])
    return [hit[5] for hit in hits[: max(limit, 0)]]
