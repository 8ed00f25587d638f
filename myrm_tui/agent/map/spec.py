"""What one map call asks for, checked once, and the identity that makes it resumable.

Why a map id from the work and an item key from the item's text (not from its position or the
source that produced it): a re-run of the same instruction, schema and model finds every item
it already finished, whether the items came back from the same JSONL file, a glob whose files
did not change, or an inline list in another order. An edited item is new work.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

# What the tool's result calls each kind of map (the item runner differs, nothing else).
LLM_MAP = "llm_map"
AGENTIC_MAP = "agentic_map"

# Items one call may take: a few thousand is what "every file / log entry / hit" means in practice;
# beyond that the JSONL artifact and the resume ledger grow past what one tool call should hold.
MAX_ITEMS = 5_000
# The longest item sent (characters, ~6k tokens): a per-item call must fit any lite model's window
# with the instruction and the schema; a longer item is cut and the row says so.
MAX_ITEM_CHARS = 24_000
# Calls in flight: 8 keeps a few hundred items to a minute or two on a hosted model without
# tripping its rate limits; 32 is the most a call may ask for.
DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 32
# Tokens (prompt + completion, summed over every item call) after which no new item starts:
# 300 items at ~2k tokens each, with room for retries. The model may lower or raise it.
DEFAULT_MAX_TOKENS = 1_000_000


class MapSpecError(ValueError):
    """The call cannot run as asked; the message says what to change (it goes to the model)."""


@dataclass(frozen=True)
class MapSpec:
    kind: str  # LLM_MAP or AGENTIC_MAP
    prompt: str  # the per-item instruction
    schema: dict[str, Any]  # JSON Schema every output must satisfy
    model: str  # the model each item call uses (resolved: a real model name)
    items: tuple[str, ...]
    concurrency: int = DEFAULT_CONCURRENCY
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_cost: float | None = None  # dollars; None: no dollar cap

    @property
    def map_id(self) -> str:
        """Same instruction, schema, model and kind: same map (items are keyed on their own)."""
        basis = json.dumps([self.kind, self.prompt, self.schema, self.model], sort_keys=True)
        return hashlib.sha256(basis.encode()).hexdigest()[:16]


def item_key(item: str) -> str:
    return hashlib.sha256(item.encode("utf-8", errors="replace")).hexdigest()[:24]


def bounded(value: Any, default: int, low: int, high: int, name: str) -> int:
    """An integer argument within [low, high]; None gives the default."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise MapSpecError(f"{name} must be an integer, got {value!r}.")
    if value < low:
        raise MapSpecError(f"{name} must be at least {low}, got {value}.")
    return min(value, high)
