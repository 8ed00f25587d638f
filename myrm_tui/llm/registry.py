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
from typing import Any

from myrm_tui.llm.model_info import CONSERVATIVE_MAX_OUTPUT, CONSERVATIVE_WINDOW, ModelInfo

# ModelInfo fields a config override may set (config keys are the field names).
OVERRIDABLE_FIELDS = (
    "context_window", "max_output_tokens", "supports_tools", "supports_vision", "supports_prompt_caching",
    "supports_reasoning", "input_cost_per_token", "output_cost_per_token", "cache_read_cost_per_token",
    "cache_write_cost_per_token", "api_base",
)

# Providers whose model names embed another vendor's name ("openrouter/anthropic/claude-x"):
# their prices differ, but the window and capabilities are the vendor's.
_ROUTER_PREFIXES = ("openrouter",)


def _model_cost() -> dict[str, dict[str, Any]]:
    import litellm

    import myrm_tui  # noqa: F401  (offline cost map before litellm loads)

    return litellm.model_cost


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
        name=model, provider=provider, context_window=CONSERVATIVE_WINDOW,
        max_output_tokens=CONSERVATIVE_MAX_OUTPUT, supports_tools=True, known=False,
        warning=(f"{model} is not in litellm's model registry; assuming a {CONSERVATIVE_WINDOW}-token window. "
                 f"Set its real context_window (and supports_tools) under [models.\"{model}\"] in the config."),
    )


def _special(model: str) -> ModelInfo | None:
    """Our own providers, which litellm's map cannot know."""
    if model.startswith("local/"):
        from myrm_tui.llm import local_provider

        return ModelInfo(name=model, provider="local", context_window=local_provider.LOCAL_CONTEXT_WINDOW,
                         max_output_tokens=local_provider.LOCAL_DEFAULT_MAX_TOKENS, supports_tools=False)
    if model.startswith("scripted/"):
        from myrm_tui.llm import scripted

        window = scripted.DEFAULT_CONTEXT_WINDOW
        try:
            window = scripted.load_script(model.split("/", 1)[1]).context_window
        except scripted.ScriptError:
            pass  # the call itself reports the broken script; the registry stays usable
        return ModelInfo(name=model, provider="scripted", context_window=window,
                         max_output_tokens=min(8192, window), supports_tools=True,
                         supports_prompt_caching=True)
    return None


@functools.lru_cache(maxsize=512)
def _registry_info(model: str) -> ModelInfo:
    costs = _model_cost()
    for key in _candidates(model):
        entry = costs.get(key)
        if isinstance(entry, Mapping) and _entry_matches(model, key, entry):
            return dataclasses.replace(_from_entry(model, entry), name=model)
    try:  # litellm also resolves aliases and provider-specific spellings we do not replicate
        import litellm

        entry = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - "not mapped" is the normal answer for custom models
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
    return sorted((name, entry) for name, entry in _model_cost().items()
                  if isinstance(entry, Mapping) and entry.get("mode") == "chat")


def search(query: str, limit: int = 50) -> list[ModelInfo]:
    """Chat models whose name contains `query` (case-insensitive); names starting with the query
    first, then shorter names (the provider's own entry before resellers' copies), then by name."""
    needle = query.strip().lower()
    hits = [(name.lower().find(needle), len(name), name, entry) for name, entry in chat_models()
            if needle in name.lower()]
    hits.sort(key=lambda hit: hit[:3])
    return [_from_entry(name, entry) for _, _, name, entry in hits[: max(limit, 0)]]


def clear_cache() -> None:
    _registry_info.cache_clear()
