"""Per-call settings passed to `llm.stream` (a plain value object, part of the fingerprint)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CallSettings:
    max_output_tokens: int = 4096
    temperature: float | None = None
    api_base: str | None = None
    timeout_s: float = 600.0
    max_attempts: int = 4
    # OpenAI session-affinity routing hint; the session id.
    prompt_cache_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
