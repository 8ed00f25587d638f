"""The model the engine tests assemble for: gpt-4o's tokenizer, a small window, prompt caching."""

from __future__ import annotations

from myrm_tui.llm.models.info import ModelInfo

MODEL = "gpt-4o"


def info(window: int = 16_000, model: str = MODEL, caching: bool = True, vision: bool = False) -> ModelInfo:
    return ModelInfo(
        name=model,
        provider="openai",
        context_window=window,
        max_output_tokens=1024,
        supports_tools=True,
        supports_vision=vision,
        supports_prompt_caching=caching,
    )
