"""Per-call settings passed to `llm.stream` (a plain value object, part of the fingerprint)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CallSettings:
    max_output_tokens: int = 4096
    temperature: float | None = None
    api_base: str | None = None
    timeout_s: float = 600.0  # the whole call, first token to last, retries included
    first_token_timeout_s: float | None = None  # per attempt, until the first streamed output
    max_attempts: int = 4
    # OpenAI session-affinity routing hint; the session id.
    prompt_cache_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def local_model_extra(model: str, threads: int) -> dict[str, Any]:
    """Call params only the embedded model reads (`local_threads`); empty for every other model,
    so hosted providers never receive a parameter they would reject."""
    if model.startswith("local/") and threads and threads > 0:
        return {"n_threads": int(threads)}
    return {}
