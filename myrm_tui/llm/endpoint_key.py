"""Which key a model call carries when the user pointed the model at their own server.

Why a placeholder: the OpenAI client litellm uses for `openai/NAME` refuses to send anything
without a key, and litellm reported that refusal as "HTTP 500 … failed on its side", retried four
times. A local Ollama, llama.cpp or vLLM server started without `--api-key` checks no key, so
the README's recipe (a `[models."openai/NAME"]` table with an `api_base`) failed for everyone who
had no OpenAI key exported. litellm already sends a placeholder of its own on its `hosted_vllm/`
and `lm_studio/` routes; this is the same for `openai/` on a declared endpoint.

What is never done: a placeholder is sent only to an `api_base` of the user's configuration (the
settings loader holds a workspace's endpoint back until the user trusts it), never to a provider's
own endpoint, and no variable of another provider is ever read for it. A key the user exported for
the provider (OPENAI_API_KEY) still goes to the endpoint as before: that is how a server started
with `--api-key` gets its key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from myrm_tui.llm.errors import MissingKeyError

# What a keyless server sees in the Authorization header: it says who sent it and that it is no
# secret, in a server's log or in a capture.
PLACEHOLDER_KEY = "myrm-no-key"
# Providers whose client insists on a key even for a custom endpoint, and for which litellm does
# not send its own placeholder.
INSISTS_ON_KEY = frozenset({"openai"})


def placeholder_key(model: str, api_base: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The key to pass for a call to `model` at `api_base`, or None to let litellm read the
    provider's own variable (no endpoint of the user's, or the variable is set)."""
    if not api_base:
        return None
    from myrm_tui.llm.models.check import provider_of_name
    from myrm_tui.llm.models.provider_keys import is_set, key_vars

    env = os.environ if env is None else env
    provider = provider_of_name(model)
    if provider not in INSISTS_ON_KEY or any(is_set(env, var) for var in key_vars(provider)):
        return None
    return PLACEHOLDER_KEY


def missing_key_error(model: str, api_base: str | None, env: Mapping[str, str] | None = None) -> MissingKeyError | None:
    """The error for a call that cannot carry a key (a hosted provider whose variable is not set),
    before anything is sent; None when the call can go."""
    from myrm_tui.llm.models.check import key_check

    check = key_check(model, api_base, env)
    if check.key_var is None or not check.key_needed or check.key_set:
        return None
    also = f" (or {' or '.join(check.alternatives)})" if check.alternatives else ""
    return MissingKeyError(
        f"{model} needs an API key in {check.key_var}{also}, which is not set, so nothing was sent.",
        hint=f"Export {check.key_var}=… and send again; or point the model at your own server with "
        f'api_base under [models."{model}"] in the config.',
    )
