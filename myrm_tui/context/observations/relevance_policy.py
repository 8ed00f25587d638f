"""Which order the emergency tier removes whole units in: oldest first, or least relevant first.

Why the model decides: removing the oldest units keeps the prompt append-only behind one cut,
which is what a provider's prefix cache pays for. A model without a prompt cache gets nothing
from that order, so it may as well keep what the current task needs and drop what it does not
(the middle band between the anchors and the fresh tail, ranked by BM25 against the query).
The `eviction_order` setting overrides the choice either way.
"""

from __future__ import annotations

from myrm_tui.llm.models.info import ModelInfo

AUTO, RECENCY, RELEVANCE = "auto", "recency", "relevance"
# The `eviction_order` setting's values (settings/schema.py spells them; a test compares).
EVICTION_ORDERS = (AUTO, RECENCY, RELEVANCE)


def keeps_prompt_cache(model: ModelInfo) -> bool:
    """Whether a byte-stable prompt prefix saves anything on this model: a provider prompt cache,
    or the embedded `local/` worker, which keeps llama.cpp's KV cache between turns and only
    evaluates the new suffix (on a CPU the prefill is most of a turn's wait)."""
    return model.supports_prompt_caching or model.name.startswith("local/")


def eviction_order(setting: str, model: ModelInfo) -> str:
    """RECENCY or RELEVANCE for this request; an unknown setting value counts as AUTO."""
    if setting in (RECENCY, RELEVANCE):
        return setting
    return RECENCY if keeps_prompt_cache(model) else RELEVANCE
