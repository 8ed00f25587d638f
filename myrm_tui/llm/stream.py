"""`stream()`: one model call through litellm, as typed events, with our own retry policy.

Why we own retries (litellm's num_retries=0): only we know whether text already reached the
user. A retry after the first streamed token would show the answer twice, so a transient failure
is retried only while the attempt has yielded nothing; after that it surfaces as
StreamInterruptedError and the caller decides (the agent keeps the user's message).

litellm is imported on the first call, never at module import (it costs seconds and the UI must
paint first), and never for the user's own OpenAI-compatible server (llm/openai_compatible.py)
or the embedded model (llm/local/provider.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from myrm_tui.llm import openai_compatible, retry_policy
from myrm_tui.llm.assembler import StreamAssembler
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.classify import classify, endpoint_label
from myrm_tui.llm.endpoint_key import missing_key_error, placeholder_key
from myrm_tui.llm.errors import (
    DeadlineExceededError,
    FirstTokenTimeoutError,
    LLMError,
    MalformedResponseError,
    ServerError,
    StreamInterruptedError,
)
from myrm_tui.llm.events import LLMEvent, RetryEvent, WaitPhase

if TYPE_CHECKING:
    from myrm_tui.llm.local.client import LocalWorkers

_log = logging.getLogger(__name__)
T = TypeVar("T")

# Bare model names that litellm routes to OpenAI itself (no "openai/" prefix needed).
_OPENAI_BARE_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")


def _litellm() -> Any:
    """Import litellm (after myrm_tui set the offline env) and register our providers."""
    from myrm_tui.llm.litellm_module import load_litellm
    from myrm_tui.llm.providers import ensure_providers_registered

    litellm = load_litellm()
    ensure_providers_registered()
    return litellm


def _client(model: str, api_base: str | None, local_workers: LocalWorkers | None) -> Callable[..., Awaitable[Any]]:
    """The `acompletion` that serves `model`: one path per provider family. The user's own
    OpenAI-compatible server and the embedded model need no translation, so they skip litellm's
    import (5-8 s); every other provider goes through litellm."""
    if openai_compatible.serves(model, api_base):
        return openai_compatible.acompletion
    from myrm_tui.llm.local import provider as local_provider  # the worker's client: loaded when a call needs it

    if local_provider.serves(model) and local_workers is not None:
        return local_provider.client(local_workers)
    return cast(Callable[..., Awaitable[Any]], _litellm().acompletion)


def prepare_call(model: str, api_base: str | None) -> None:
    """Load, in the caller's thread, what the first call to `model` will load: the client
    `_client` picks for it, and nothing else. Why: the chat does this in its warm-up, off the UI
    loop, while the user types; the warm-up used to import litellm for every model, so with the
    user's own server (which never needs it) a first message sent in the first seconds waited
    for a 6-8 s import it did not use (the turn waits for the warm-up), and one sent later
    shared the 2 cores and the interpreter lock with it."""
    if openai_compatible.serves(model, api_base):
        openai_compatible.prewarm()
        return
    from myrm_tui.llm.local import provider as local_provider

    if local_provider.serves(model):
        from myrm_tui.llm.local import client  # noqa: F401 - the worker's client; the worker starts with the call

        return
    _litellm()
    import httpcore  # noqa: F401 - litellm's httpx loads it on the first request, not at import


@dataclass(frozen=True)
class StreamWithLocalWorkers:
    """`stream` as the agent's StreamFn port, with its owner's embedded-model workers: what the
    app, `myrm run` and an ACP server hand their sessions, so a `local/...` model keeps one worker
    (and its loaded weights and KV cache) for as long as the owner runs."""

    local_workers: LocalWorkers

    def __call__(
        self, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, settings: CallSettings, /
    ) -> AsyncIterator[LLMEvent]:
        return stream(model, messages, tools, settings, local_workers=self.local_workers)


# What a call waits on before its first token (WaitPhase, with `CallSettings.report_waits`).
WAITING_FIRST_TOKEN = "waiting for the first token"  # the request is sent; the model is working
LOADING_MODEL = "loading the model"  # the embedded model's worker starts or reads its weights


def _wait_before_response(model: str, api_base: str | None, local_workers: LocalWorkers | None) -> str:
    """What the call waits on until its response starts: the endpoint's host (no credentials), or
    for the embedded model whether its worker has the weights loaded yet."""
    from urllib.parse import urlsplit

    from myrm_tui.llm.local import provider as local_provider

    if local_provider.serves(model):
        running = local_workers.running() if local_workers is not None else []
        loaded = any(w.model == model and w.ready.is_set() and w.dead is None for w in running)
        return WAITING_FIRST_TOKEN if loaded else LOADING_MODEL
    host = ""
    if api_base:
        try:
            parts = urlsplit(api_base)
            host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        except ValueError:
            host = ""
    return f"connecting to {host or (model.split('/')[0] if '/' in model else 'openai')}"


def is_openai_native(model: str, api_base: str | None = None) -> bool:
    """True when the call goes to OpenAI's own API, the only one that accepts prompt_cache_key."""
    if api_base:
        return False
    return model.startswith("openai/") or model.startswith(_OPENAI_BARE_PREFIXES)


def completion_kwargs(
    model: str,
    messages: list[dict],
    tools: list[dict] | None,
    settings: CallSettings,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments for litellm.acompletion (pure but for the environment's key
    variables, so tests can check them)."""
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
        placeholder = placeholder_key(model, settings.api_base, env)
        if placeholder is not None:  # the user's own keyless server (endpoint_key.py)
            kwargs["api_key"] = placeholder
    if settings.prompt_cache_key and is_openai_native(model, settings.api_base):
        kwargs["prompt_cache_key"] = settings.prompt_cache_key
    if settings.reasoning_effort:  # only set for models the registry says can reason (call_settings)
        kwargs["reasoning_effort"] = settings.reasoning_effort
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


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _carries_output(chunk: Any) -> bool:
    """True when a chunk holds something the model produced (text, reasoning, a tool-call
    fragment, a finish): the first such chunk ends the wait for the first token. A role-only
    opening chunk or a keep-alive does not."""
    for choice in _field(chunk, "choices") or ():
        delta = _field(choice, "delta")
        if delta is not None and any(
            _field(delta, k) for k in ("content", "reasoning_content", "tool_calls", "thinking_blocks")
        ):
            return True
        if _field(choice, "finish_reason"):
            return True
    return False


def _content_type(response: Any) -> str | None:
    """The HTTP content type the endpoint answered with, when the provider stack kept it."""
    if isinstance(response, openai_compatible.ChunkStream):
        return response.content_type
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {} if isinstance(hidden, dict) else {}
    value = headers.get("llm_provider-content-type") if isinstance(headers, dict) else None
    if value:
        return str(value)
    raw = getattr(getattr(getattr(response, "completion_stream", None), "response", None), "headers", None)
    try:
        return raw.get("content-type") if raw is not None else None
    except AttributeError:
        return None


def _empty_answer(model: str, where: str, response: Any) -> LLMError:
    """Why an attempt produced nothing: a body that was not an event stream at all (an HTML
    login page with status 200), or a real stream that ended empty."""
    content_type = _content_type(response)
    if content_type and "event-stream" not in content_type.lower():
        what = "an HTML page" if "html" in content_type.lower() else "a body"
        return MalformedResponseError(
            f"{model}{where} answered with {what} ({content_type.split(';')[0]}) instead of an event stream."
        )
    return ServerError(
        f"{model} returned an empty response (no text, no tool call, no usage)",
        hint="The server may have failed after accepting the request (for a "
        "local server: a prompt larger than its context); check its log.",
    )


@dataclass(frozen=True)
class _Deadlines:
    """The call's two limits on the event loop's clock: the whole call (`llm_timeout`, retries
    included) and, per attempt, the wait for the first output (`llm_first_token_timeout`).

    Why deadlines and not a per-read timeout: a server that sends one token every 2 s never
    trips a 5 s read timeout, and kept a turn going for 56 s. Each await on the provider is
    bounded by the nearest deadline, never by a fresh interval."""

    model: str
    where: str
    total_s: float | None
    first_token_s: float | None
    total_at: float | None

    @classmethod
    def start(cls, model: str, where: str, settings: CallSettings) -> _Deadlines:
        total = settings.timeout_s if settings.timeout_s and settings.timeout_s > 0 else None
        first = settings.first_token_timeout_s
        first = first if first and first > 0 else None
        now = asyncio.get_running_loop().time()
        return cls(model, where, total, first, now + total if total else None)

    def first_token_at(self) -> float | None:
        if self.first_token_s is None:
            return None
        return asyncio.get_running_loop().time() + self.first_token_s

    def nearest(self, first_token_at: float | None) -> tuple[float | None, Callable[[], LLMError]]:
        """The deadline that binds now, and the error that says so when it passes."""
        if first_token_at is not None and (self.total_at is None or first_token_at < self.total_at):
            return first_token_at, lambda: FirstTokenTimeoutError(
                f"{self.model}{self.where} sent nothing within {self.first_token_s:g} s of the request "
                "(llm_first_token_timeout)."
            )
        return self.total_at, lambda: DeadlineExceededError(
            f"{self.model}{self.where} did not finish its answer within {self.total_s:g} s (llm_timeout)."
        )

    def left(self) -> float | None:
        if self.total_at is None:
            return None
        return self.total_at - asyncio.get_running_loop().time()


async def _before(when: float | None, expired: Callable[[], LLMError], awaitable: Awaitable[T]) -> T:
    """`await awaitable`, abandoned (cancelled) at loop time `when` with `expired()`."""
    if when is None:
        return await awaitable
    limit = asyncio.timeout_at(when)
    try:
        async with limit:
            return await awaitable
    except TimeoutError:
        if limit.expired():
            raise expired() from None
        raise


async def stream(
    model: str,
    messages: list[dict],
    tools: list[dict] | None,
    settings: CallSettings,
    *,
    local_workers: LocalWorkers | None = None,
) -> AsyncIterator[LLMEvent]:
    """Stream one assistant turn. Raises a typed `LLMError` when the call finally fails.
    `local_workers`: the caller's pool for `local/...` models; without one, such a call loads the
    model in a worker of its own that ends with the call (a summary, a replay: no owner to ask)."""
    from myrm_tui.llm.local import provider as local_provider

    if local_workers is not None or not local_provider.serves(model):
        async for event in _stream(model, messages, tools, settings, local_workers):
            yield event
        return
    from myrm_tui.llm.local.client import LocalWorkers

    own = LocalWorkers()
    try:
        async for event in _stream(model, messages, tools, settings, own):
            yield event
    finally:
        await asyncio.to_thread(own.close)


async def _stream(
    model: str,
    messages: list[dict],
    tools: list[dict] | None,
    settings: CallSettings,
    local_workers: LocalWorkers | None,
) -> AsyncIterator[LLMEvent]:
    missing = missing_key_error(model, settings.api_base)
    if missing is not None:  # before litellm (seconds to import) and before any retry
        raise missing
    kwargs = completion_kwargs(model, messages, tools, settings)
    acompletion = _client(model, settings.api_base, local_workers)
    max_attempts = max(1, settings.max_attempts)
    deadlines = _Deadlines.start(model, endpoint_label(settings.api_base), settings)
    attempt = 0
    while True:
        attempt += 1
        assembler = StreamAssembler(id_salt=f"{model}:{len(messages)}")
        yielded = False
        response: Any = None
        first_token_at = deadlines.first_token_at()
        try:
            if settings.report_waits:
                waiting = _wait_before_response(model, settings.api_base, local_workers)
                yield WaitPhase(waiting)
            response = await _before(*deadlines.nearest(first_token_at), acompletion(**kwargs))
            if settings.report_waits and waiting.startswith("connecting"):
                yield WaitPhase(WAITING_FIRST_TOKEN)  # the response started: the model is at work
            chunks = response.__aiter__()
            while True:
                try:
                    chunk = await _before(*deadlines.nearest(first_token_at), chunks.__anext__())
                except StopAsyncIteration:
                    break
                if first_token_at is not None and _carries_output(chunk):
                    first_token_at = None  # from here on only the whole-call deadline applies
                for event in assembler.feed(chunk):
                    yielded = True
                    yield event
            if assembler.is_empty():
                raise _empty_answer(model, deadlines.where, response)
            for event in assembler.finish():
                yielded = True
                yield event
            return
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            error = classify(exc, model, api_base=settings.api_base)
            if isinstance(error, DeadlineExceededError):
                _raise(error, exc)  # no time is left, and "dropped mid-answer" would not be true
            if yielded:
                if error.transient:
                    raise StreamInterruptedError(
                        f"The connection to {model} dropped mid-answer.", status=error.status
                    ) from exc
                _raise(error, exc)
            if not error.transient or attempt >= max_attempts:
                _raise(error, exc)
            delay = retry_policy.backoff_delay(attempt, getattr(error, "retry_after", None))
            left = deadlines.left()
            if left is not None and delay >= left:
                _raise(error, exc)  # a retry could not finish before the call's deadline
        finally:
            if response is not None:
                await _close(response)
        yield RetryEvent(attempt=attempt, max_attempts=max_attempts, delay_s=delay, reason=error.message)
        await asyncio.sleep(delay)


__all__ = ["LLMError", "StreamWithLocalWorkers", "completion_kwargs", "is_openai_native", "stream"]
