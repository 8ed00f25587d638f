"""The keys a `[models."NAME"]` table may set, with their types: the config side of a model override.

Why here and not derived from llm's `ModelInfo`: settings sit below llm in the layers (every layer
reads settings, and settings read nothing of the app's), so the loader cannot import the model
registry. The registry reads this table instead (`llm.registry.OVERRIDABLE_FIELDS`), and
tests/llm/test_model_override_fields.py checks that each key is a `ModelInfo` field of this type.
"""

from __future__ import annotations

# Config keys are ModelInfo's field names. Optional text fields (`api_base`, `reasoning_effort`)
# are `str` here: a config file cannot write None, it leaves the key out.
MODEL_OVERRIDE_TYPES: dict[str, type] = {
    "context_window": int,
    "max_output_tokens": int,
    "supports_tools": bool,
    "supports_vision": bool,
    "supports_prompt_caching": bool,
    "supports_reasoning": bool,
    "input_cost_per_token": float,
    "output_cost_per_token": float,
    "cache_read_cost_per_token": float,
    "cache_write_cost_per_token": float,
    "api_base": str,
    "reasoning_effort": str,
}
