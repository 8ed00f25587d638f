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


def provider_key_status(env: Mapping[str, str] | None = None) -> list[tuple[str, str, bool]]:
    """(provider, env var name, present) for `myrm doctor`; never the values."""
    env = os.environ if env is None else env
    return [(provider, var, bool(env.get(var, "").strip())) for provider, var, _ in PROVIDER_KEYS]
