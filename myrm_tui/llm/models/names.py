"""The name a person types for a model litellm's map lists under a bare key.

Why: litellm's map keys OpenAI, Anthropic, Bedrock and a few other providers' models without a
prefix ("gpt-4o", "claude-opus-4-5"), while the README, `--model` examples and every other
provider use "provider/model". `myrm models` prints the prefixed name, so what it lists is what
you paste, and it reads the same as "anthropic/claude-sonnet-4-5" in the docs. Pure.
"""

from __future__ import annotations

# litellm's `litellm_provider` values whose route prefix is spelled differently: Bedrock's
# Converse entries route as "bedrock/…", Vertex's per-family catalogues as "vertex_ai/…".
ROUTE_PREFIX = {"bedrock_converse": "bedrock"}
ROUTE_PREFIX_FAMILIES = ("vertex_ai",)  # "vertex_ai-language-models", "vertex_ai-anthropic_models", …


def route_prefix(provider: str) -> str:
    if provider in ROUTE_PREFIX:
        return ROUTE_PREFIX[provider]
    for family in ROUTE_PREFIX_FAMILIES:
        if provider.startswith(f"{family}-"):
            return family
    return provider


def prefixed_name(name: str, provider: str) -> str:
    """`name` with its provider in front, unless it already has a prefix (or no provider is known)."""
    if "/" in name or not provider or provider == "unknown":
        return name
    return f"{route_prefix(provider)}/{name}"
