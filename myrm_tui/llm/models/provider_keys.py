"""The providers myrm finds by their API key in the environment, in priority order.

Why its own module: the default-model pick (defaults.py) and the "can run now" test of the model
registry (registry.ready_providers) both read it, and defaults.py reads the registry: with the
list in defaults.py the two modules imported each other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# (provider, env var, litellm model prefix) in priority order.
PROVIDER_KEYS: tuple[tuple[str, str, str], ...] = (
    ("anthropic", "ANTHROPIC_API_KEY", "anthropic/"),
    ("openai", "OPENAI_API_KEY", "openai/"),
    ("gemini", "GEMINI_API_KEY", "gemini/"),
    ("deepseek", "DEEPSEEK_API_KEY", "deepseek/"),
    ("openrouter", "OPENROUTER_API_KEY", "openrouter/"),
    ("mistral", "MISTRAL_API_KEY", "mistral/"),
    ("groq", "GROQ_API_KEY", "groq/"),
    ("xai", "XAI_API_KEY", "xai/"),
)


# Every variable litellm reads a provider's key from, the one to name first (litellm's
# validate_environment). A provider missing here keeps its credentials elsewhere (AWS, Google
# Cloud, Azure settings) or is one myrm has not been told about: no variable is named for it.
KEY_VARS: dict[str, tuple[str, ...]] = {
    **{provider: (var,) for provider, var, _ in PROVIDER_KEYS},
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "cohere": ("COHERE_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "codestral": ("CODESTRAL_API_KEY",),
}


def is_set(env: Mapping[str, str], var: str) -> bool:
    return bool(env.get(var, "").strip())


def key_vars(provider: str) -> tuple[str, ...]:
    """The variables `provider`'s key may be in (first: the one to tell people), or ()."""
    return KEY_VARS.get(provider, ())


def provider_key_status(env: Mapping[str, str] | None = None) -> list[tuple[str, str, bool]]:
    """(provider, env var name, present) for `myrm doctor`; never the values."""
    env = os.environ if env is None else env
    return [(provider, var, is_set(env, var)) for provider, var, _ in PROVIDER_KEYS]
