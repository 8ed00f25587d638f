"""`stream()`: one model call through litellm, as typed events, with our own retry policy.

Why we own retries (litellm's num_retries=0): only we know whether text already reached the
user. A retry after the first streamed token would show the answer twice, so a transient failure
is retried only while the attempt has yielded nothing; after that it surfaces as
StreamInterruptedError and the caller decides (the agent keeps the user's message).

litellm is imported on the first call, never at module import (it costs seconds and the UI must
paint first).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from myrm_tui.llm import retry_policy
from myrm_tui.llm.assembler import StreamAssembler
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.classify import classify
from myrm_tui.llm.errors import LLMError, ServerError, StreamInterruptedError
from myrm_tui.llm.events import LLMEvent, RetryEvent

_log = logging.getLogger(__name__)

# Bare model names that litellm routes to OpenAI itself (no "openai/" prefix needed).
_OPENAI_BARE_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")


def _litellm() -> Any:
    """Import litellm (after myrm_tui set the offline env) and register our providers."""
    import litellm

    import myrm_tui  # noqa: F401  (sets LITELLM_LOCAL_MODEL_COST_MAP before litellm loads)
    from myrm_tui.llm.providers import ensure_providers_registered

    # litellm prints "Give Feedback / Get Help" banners on stdout on errors; that would corrupt
    # the TUI and the headless JSON output.
    litellm.suppress_debug_info = True
    ensure_providers_registered()
    return litellm


def is_openai_native(model: str, api_base: str | None = None) -> bool:
    """True when the call goes to OpenAI's own API, the only one that accepts prompt_cache_key."""
    if api_base:
        return False
    return model.startswith("openai/") or model.startswith(_OPENAI_BARE_PREFIXES)


def completion_kwargs(model: str, messages: list[dict], tools: list[dict] | None,
                      settings: CallSettings) -> dict[str, Any]:
    """The keyword arguments for litellm.acompletion (pure, so tests can check them)."""
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "num_retries": 0,
        "timeout": settings.timeout_s,
        "max_tokens": settings.max_output_tokens,
    }
    if tools:
        kwargs["tools"] = tools
    if settings.temperature is not None:
        kwargs["temperature"] = settings.temperature
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    if settings.prompt_cache_key and is_openai_native(model, settings.api_base):
        kwargs["prompt_cache_key"] = settings.prompt_cache_key
    kwargs.update(settings.extra)
    return kwargs


def _raise(error: LLMError, cause: BaseException) -> None:
    if error is cause:
        raise error
    raise error from cause


async def _close(response: Any) -> None:
    close = getattr(response, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:  # noqa: BLE001 - best effort: the connection is being abandoned anyway
        _log.debug("closing the provider stream failed", exc_info=True)


async def stream(model: str, messages: list[dict], tools: list[dict] | None,
                 settings: CallSettings) -> AsyncIterator[LLMEvent]:
    """Stream one assistant turn. Raises a typed `LLMError` when the call finally fails."""
    litellm = _litellm()
    kwargs = completion_kwargs(model, messages, tools, settings)
    max_attempts = max(1, settings.max_attempts)
    attempt = 0
    while True:
        attempt += 1
        assembler = StreamAssembler(id_salt=f"{model}:{len(messages)}")
        yielded = False
        response: Any = None
        try:
            response = await litellm.acompletion(**kwargs)
            async for chunk in response:
                for event in assembler.feed(chunk):
                    yielded = True
                    yield event
            if assembler.is_empty():
                raise ServerError(f"{model} returned an empty response (no text, no tool call, no usage)",
                                  hint="The server may have failed after accepting the request (for a "
                                       "local server: a prompt larger than its context); check its log.")
            for event in assembler.finish():
                yielded = True
                yield event
            return
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            error = classify(exc, model, api_base=settings.api_base)
            if yielded:
                if error.transient:
                    raise StreamInterruptedError(
                        f"The connection to {model} dropped mid-answer.",
                        status=error.status) from exc
                _raise(error, exc)
            if not error.transient or attempt >= max_attempts:
                _raise(error, exc)
            delay = retry_policy.backoff_delay(attempt, getattr(error, "retry_after", None))
        finally:
            if response is not None:
                await _close(response)
        yield RetryEvent(attempt=attempt, max_attempts=max_attempts, delay_s=delay, reason=error.message)
        await asyncio.sleep(delay)


__all__ = ["LLMError", "completion_kwargs", "is_openai_native", "stream"]
