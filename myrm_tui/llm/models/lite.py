"""The small model of each provider, which writes summaries when the user named no lite model.

Why: a summary is an extractive note about turns already made; a provider's small model writes it
about as well as its large one at a fraction of the price (Haiku is a third of Sonnet's price per
input token, the -mini and Flash models less still), and summaries are a large share of a long
session's calls. Without this the main model paid for every summary unless the user knew to set
`lite_model`. Only the main model's own provider is considered, so the summary goes where the
conversation already goes and uses a key the user already set; a provider absent here (or whose
key is not set) keeps summarizing with the main model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS, is_set, key_vars

# `lite_model` values: "off" sends summaries to the main model; an empty value (the default)
# chooses automatically; any other value names the lite model.
LITE_OFF = "off"
LITE_AUTO = ""

# Per provider, litellm registry names tried in order: the newest small model first, then the
# older small ones a litellm version may still list. The first present without a deprecation
# date wins, else the first present (as defaults.PREFERRED_MODELS does for the main model).
LITE_MODELS: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-3-5-haiku-20241022"),
    "openai": ("gpt-5-mini", "gpt-4.1-mini", "gpt-4o-mini"),
    "gemini": ("gemini/gemini-flash-latest", "gemini/gemini-2.5-flash"),
    "mistral": ("mistral/mistral-small-latest",),
}


def provider_small_model(provider: str) -> str | None:
    """`provider`'s small model as myrm names it (`provider/name`), from litellm's registry."""
    from myrm_tui.llm.models import registry

    chat = dict(registry.chat_models())
    present = [name for name in LITE_MODELS.get(provider, ()) if chat.get(name, {}).get("litellm_provider") == provider]
    current = [name for name in present if not chat[name].get("deprecation_date")]
    if not (current or present):
        return None
    name = (current or present)[0]
    prefix = next((p for keyed, _, p in PROVIDER_KEYS if keyed == provider), provider + "/")
    return name if name.startswith(prefix) else prefix + name


def has_key(provider: str, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return any(is_set(env, var) for var in key_vars(provider))
