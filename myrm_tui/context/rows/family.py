"""Provider families: what shape of history each one accepts."""

from __future__ import annotations

ANTHROPIC = "anthropic"
REASONING_TOOLS = "reasoning-tools"  # DeepSeek, Kimi, Qwen, GLM, MiMo: reasoning_content on tool turns
OPENAI = "openai"
OTHER = "other"

_REASONING_MARKERS = ("deepseek", "kimi", "moonshot", "qwen", "qwq", "glm", "mimo", "minimax")


def family_of(model: str) -> str:
    name = model.lower()
    if "claude" in name or name.startswith("anthropic/") or name.startswith("bedrock/anthropic"):
        return ANTHROPIC
    if any(marker in name for marker in _REASONING_MARKERS):
        return REASONING_TOOLS
    if (
        name.startswith("openai/")
        or name.startswith("gpt-")
        or name.split("/")[-1].startswith(("gpt-", "o1", "o3", "o4"))
    ):
        return OPENAI
    return OTHER


def provider_of(model: str) -> str:
    """The cache-TTL key for a model (see config.CACHE_TTL_S)."""
    family = family_of(model)
    if family == ANTHROPIC:
        return "anthropic"
    name = model.lower()
    if "deepseek" in name:
        return "deepseek"
    if "gemini" in name:
        return "gemini"
    if family == OPENAI:
        return "openai"
    return "default"
