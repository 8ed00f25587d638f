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
    # low / medium / high, passed to litellm as `reasoning_effort` (None: not sent at all).
    reasoning_effort: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Yield WaitPhase events before the first token (the chat's status line names a long wait).
    report_waits: bool = False


def local_model_extra(model: str, threads: int) -> dict[str, Any]:
    """Call params only the embedded model reads (`local_threads`); empty for every other model,
    so hosted providers never receive a parameter they would reject."""
    if model.startswith("local/") and threads and threads > 0:
        return {"n_threads": int(threads)}
    return {}


REASONING_EFFORTS = ("low", "medium", "high")


def reasoning_effort_for(setting: str, model: Any) -> str | None:
    """The `reasoning_effort` to send, or None. The model's own override (`[models."NAME"]
    reasoning_effort`, carried on ModelInfo) beats the setting; "off" sends nothing; and nothing is
    sent to a model the registry does not mark `supports_reasoning` (litellm would pass it on, and
    a provider that does not know the parameter refuses the whole call)."""
    chosen = getattr(model, "reasoning_effort", None) or setting
    if chosen not in REASONING_EFFORTS or not getattr(model, "supports_reasoning", False):
        return None
    return chosen
