"""Turn whatever a provider stack raised into one of the typed errors of `errors.py`.

Why by class *name* along the MRO instead of isinstance: the same failure can arrive as a
litellm exception, an openai SDK exception, an httpx or aiohttp transport error, or a builtin
OSError, and matching names lets us classify all of them without importing litellm (classify is
also used by code paths that never loaded it). The most specific class wins because the MRO is
walked from the exception's own class upwards (litellm.Timeout subclasses APIConnectionError,
ContextWindowExceededError subclasses BadRequestError).

Messages name the model and never include a credential: provider texts are scrubbed of anything
that looks like an API key before they are quoted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from myrm_tui.llm import errors as E

# Provider texts that mean "the prompt does not fit", seen from OpenAI, Anthropic, Gemini,
# vLLM and llama.cpp servers (lower-cased substring match).
CONTEXT_OVERFLOW_MARKERS = (
    "context length",
    "context_length_exceeded",
    "maximum context",
    "context window",
    "exceed_context_size",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "exceeds the available context",
)

# litellm's words when it stops a stream whose last chunks were all identical (a model in a loop).
REPETITION_MARKER = "repeating the same chunk"

# How much of a provider's own error text we quote: enough to be useful, short enough to be one line.
DETAIL_MAX_CHARS = 200

_KEY_LIKE = re.compile(r"\b(sk|pk|rk|gsk|xai|key)[-_][A-Za-z0-9_\-]{8,}", re.IGNORECASE)
_BEARER = re.compile(r"(bearer\s+)\S+", re.IGNORECASE)

_CONNECTION_NAMES = {
    "APIConnectionError",
    "ConnectError",
    "ConnectTimeout",
    "RemoteProtocolError",
    "ReadError",
    "WriteError",
    "NetworkError",
    "ClientConnectionError",
    "ClientConnectorError",
    "ServerDisconnectedError",
    "ClientOSError",
    "ClientPayloadError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "ConnectionAbortedError",
    "BrokenPipeError",
    "IncompleteRead",
    "gaierror",
}
_TIMEOUT_NAMES = {
    "Timeout",
    "APITimeoutError",
    "TimeoutException",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "ServerTimeoutError",
    "TimeoutError",
}
_SERVER_NAMES = {"InternalServerError", "ServiceUnavailableError", "BadGatewayError"}


def provider_of(model: str) -> str:
    """The provider prefix of a litellm model name ("anthropic/claude-x" -> "anthropic")."""
    if "/" in model:
        return model.split("/", 1)[0]
    return "openai" if model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")) else "the provider"


def unwrap(exc: BaseException) -> BaseException:
    """litellm wraps errors raised while streaming in MidStreamFallbackError; look inside."""
    seen = 0
    while type(exc).__name__ == "MidStreamFallbackError" and seen < 5:
        inner = getattr(exc, "original_exception", None)
        if not isinstance(inner, BaseException):
            break
        exc = inner
        seen += 1
    return exc


def scrub(text: str, env: Mapping[str, str] | None = None) -> str:
    """Remove anything that could be a credential from a provider message, and shorten it."""
    env = os.environ if env is None else env
    for name, value in env.items():
        if value and len(value) >= 8 and ("KEY" in name or "TOKEN" in name or "SECRET" in name):
            text = text.replace(value, "[redacted]")
    text = _BEARER.sub(r"\1[redacted]", text)
    text = _KEY_LIKE.sub("[redacted]", text)
    text = " ".join(text.split())
    if len(text) > DETAIL_MAX_CHARS:
        text = text[: DETAIL_MAX_CHARS - 1] + "…"
    return text


def _detail(exc: BaseException) -> str:
    raw = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    raw = re.sub(r"^(litellm\.\w+:\s*)+", "", str(raw))
    return scrub(_redacted(raw))


def _redacted(text: str) -> str:
    """`text` through the provider-error sink (URLs with passwords, query-string keys, …)."""
    from myrm_tui.sinks import PROVIDER_ERROR
    from myrm_tui.sinks import scrub as scrub_for

    return scrub_for(PROVIDER_ERROR, text)


def endpoint_name(api_base: str) -> str:
    """The server a custom api_base points at, as host:port ("127.0.0.1:8080"): what a person
    calls a local Ollama or llama.cpp server, where the provider's name ("openai") would mislead."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(api_base)
        host, port = parts.hostname, parts.port
    except ValueError:
        return _redacted(api_base)
    if not host:
        return _redacted(api_base)
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port else shown


def endpoint_label(api_base: str | None) -> str:
    """ " at <api_base>" for messages, with any password or key in the URL redacted; "" without."""
    return f" at {_redacted(api_base)}" if api_base else ""


def _has_userinfo(api_base: str) -> bool:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(api_base)
    except ValueError:
        return False
    return parts.username is not None or parts.password is not None


def _malformed_data(exc: BaseException) -> str | None:
    """What the JSON decoder said when the stream's data was not JSON (a JSONDecodeError under
    litellm's APIConnectionError, which would otherwise read as a network failure)."""
    for link in _chain(exc):
        if isinstance(link, json.JSONDecodeError):
            return link.msg
    return None


def _refused_userinfo(exc: BaseException, api_base: str | None) -> bool:
    """httpx refuses, before sending anything, to combine an Authorization header with a
    user:password in the URL; litellm reports that as an HTTP 500."""
    if not api_base or not _has_userinfo(api_base):
        return False
    return any(isinstance(link, ValueError) and not isinstance(link, json.JSONDecodeError) for link in _chain(exc))


def _status(exc: BaseException) -> int | None:
    for attr in ("status_code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _parse_retry_after(value: object) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait: an attribute, the error's headers, or the response's."""
    for attr in ("retry_after",):
        parsed = _parse_retry_after(getattr(exc, attr, None))
        if parsed is not None:
            return parsed
    header_sources = [
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ]
    for headers in header_sources:
        if not headers:
            continue
        try:
            items = {str(k).lower(): v for k, v in dict(headers).items()}
        except (TypeError, ValueError):
            continue
        for key in ("retry-after", "x-ratelimit-reset-after"):
            parsed = _parse_retry_after(items.get(key))
            if parsed is not None:
                return parsed
        ms = items.get("retry-after-ms")
        if ms is not None:
            try:
                return max(float(ms) / 1000.0, 0.0)
            except ValueError:
                pass
    return None


def _chain(exc: BaseException, depth: int = 8) -> list[BaseException]:
    """exc and what caused it (litellm wraps openai wraps httpx wraps aiohttp wraps OSError)."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(out) < depth and current not in out:
        out.append(current)
        nxt = getattr(current, "original_exception", None)
        current = nxt if isinstance(nxt, BaseException) else (current.__cause__ or current.__context__)
    return out


def transport_failure(exc: BaseException) -> str | None:
    """ "timeout" or "connection" when a transport error lies under a generic API error.

    litellm reports a refused connection as InternalServerError("Connection error."); only the
    cause chain shows the httpx.ConnectError / ConnectionRefusedError underneath.
    """
    for link in _chain(exc)[1:]:
        names = {cls.__name__ for cls in type(link).__mro__}
        if names & (_TIMEOUT_NAMES - {"Timeout"}):
            return "timeout"
        if names & _CONNECTION_NAMES:
            return "connection"
    return None


def _is_context_overflow(detail: str) -> bool:
    low = detail.lower()
    return any(marker in low for marker in CONTEXT_OVERFLOW_MARKERS)


# litellm's words when a bare model name names no provider it knows ("gpt4o").
NO_PROVIDER_MARKER = "LLM Provider NOT provided"
# The OpenAI client's words (two versions) when it has no key to send: nothing was sent.
MISSING_CREDENTIALS_MARKERS = ("Missing credentials", "api_key client option must be set")


def _key_hint(model: str, api_base: str | None) -> str:
    """What to check when a key was refused, naming the variable the key came from."""
    from myrm_tui.llm.endpoint_key import PLACEHOLDER_KEY, placeholder_key
    from myrm_tui.llm.models.check import key_check

    check = key_check(model, api_base)
    var = check.key_var or "the provider's key variable"
    if api_base and placeholder_key(model, api_base) == PLACEHOLDER_KEY:
        return (
            f"The server at {endpoint_name(api_base)} wants a key and none was set: export {var} with the "
            "key the server was started with."
        )
    if api_base:
        return f"The server at {endpoint_name(api_base)} refused the key in {var}: check that it is the server's key."
    if check.key_var and not check.key_set:
        return f"{var} is not set: export it with your {check.provider} key."
    return f"Check the key in {var} (`myrm doctor` lists the variables it reads)."


def _missing_credentials(exc: BaseException, model: str, api_base: str | None) -> E.LLMError | None:
    """The provider's client had no key to send (reported by litellm as an HTTP 500): a
    configuration error that names the variable, never retried."""
    text = " ".join(str(link) for link in _chain(exc))
    if not any(marker in text for marker in MISSING_CREDENTIALS_MARKERS):
        return None
    from myrm_tui.llm.models.check import key_check

    var = key_check(model, api_base).key_var or "the provider's API key variable"
    return E.MissingKeyError(f"{model} needs an API key in {var}, which is not set, so nothing was sent.")


def _no_provider(model: str, status: int | None) -> E.LLMError:
    """litellm could not tell which provider serves a bare name: say so with what was meant."""
    from myrm_tui.llm.models.check import check_model

    problem = check_model(model).problem or f"myrm cannot tell which provider serves {model!r}."
    return E.ModelNotFoundError(
        problem, hint="Choose the model again: --model NAME, or F2 / Ctrl+O in the chat.", status=status
    )


def classify(exc: BaseException, model: str, *, api_base: str | None = None) -> E.LLMError:
    """The typed error for `exc`, with one sentence naming `model` (never a key)."""
    if isinstance(exc, E.LLMError):
        return exc
    exc = unwrap(exc)
    # Our own providers (the local model's worker) raise typed errors that litellm wraps on the
    # way out; the typed one already says what is true.
    typed_cause = next((link for link in _chain(exc) if isinstance(link, E.LLMError)), None)
    if typed_cause is not None:
        return typed_cause
    # Who failed: the server at host:port when the user pointed the model at their own server,
    # else the provider by name.
    provider = f"the server at {endpoint_name(api_base)}" if api_base else provider_of(model)
    endpoint = _redacted(api_base) if api_base else ""
    reach = f"the server at {endpoint}" if api_base else provider  # the whole address: a wrong path shows
    lead = provider[:1].upper() + provider[1:] if api_base else provider  # starts a sentence
    server_hint = "Its log says why; the message is kept, send it again once the server is fixed." if api_base else None
    where = endpoint_label(api_base)
    missing = _missing_credentials(exc, model, api_base)
    if missing is not None:
        return missing
    if _refused_userinfo(exc, api_base):
        return E.EndpointConfigError(
            f"api_base for {model} has a user name and password in it ({endpoint}); the client sends "
            "the API key as the Authorization header and refuses to send both, so nothing was sent.",
            hint="Remove user:password from api_base and put the endpoint's key in the provider's key "
            "variable (e.g. OPENAI_API_KEY), which is sent as a Bearer token.",
        )
    malformed = _malformed_data(exc)
    if malformed is not None:
        return E.MalformedResponseError(
            f"{model}{where} sent stream data that is not valid JSON ({malformed}); the connection itself worked."
        )
    detail = _detail(exc)
    status = _status(exc)
    if NO_PROVIDER_MARKER in detail:
        return _no_provider(model, status)
    if REPETITION_MARKER in detail:
        return E.RepetitionError(f"{model} got stuck repeating the same text, so its answer was stopped.")
    names = [cls.__name__ for cls in type(exc).__mro__]
    explicit = {
        "ContextWindowExceededError",
        "ContentPolicyViolationError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "RateLimitError",
        "BadRequestError",
        "UnprocessableEntityError",
    }
    if not explicit.intersection(names):
        transport = transport_failure(exc)
        if transport == "timeout":
            return E.TimeoutError_(f"{model} did not answer in time{where}.")
        if transport == "connection":
            return E.NetworkUnreachableError(f"Could not reach {reach} for {model}.")

    def by_name() -> E.LLMError | None:
        for name in names:
            if name == "ContextWindowExceededError":
                return E.ContextWindowExceededError(
                    f"The conversation is larger than {model}'s context window.", status=status
                )
            if name == "ContentPolicyViolationError":
                return E.ContentRefusedError(f"{lead} refused the request to {model} (content policy).", status=status)
            if name in ("AuthenticationError", "PermissionDeniedError"):
                return E.AuthenticationError(
                    f"{model} rejected the API key.", hint=_key_hint(model, api_base), status=status
                )
            if name == "NotFoundError":
                return E.ModelNotFoundError(f"{lead} does not know the model {model} ({detail}).", status=status)
            if name == "RateLimitError":
                return E.RateLimitError(
                    f"{model} is rate limiting requests.", status=status or 429, retry_after=retry_after_of(exc)
                )
            if name in _TIMEOUT_NAMES:
                return E.TimeoutError_(f"{model} did not answer in time{where}.", status=status)
            if name in _SERVER_NAMES:
                return E.ServerError(
                    f"{lead} failed on its side while serving {model} (HTTP {status or 500}): {detail}",
                    hint=server_hint,
                    status=status,
                )
            if name in ("BadRequestError", "UnprocessableEntityError", "UnsupportedParamsError"):
                if _is_context_overflow(detail):
                    return E.ContextWindowExceededError(
                        f"The conversation is larger than {model}'s context window.", status=status
                    )
                return E.ProviderError(f"{model} rejected the request: {detail}", status=status)
            if name in _CONNECTION_NAMES:
                if _is_context_overflow(detail):
                    return E.ContextWindowExceededError(
                        f"The conversation is larger than {model}'s context window.", status=status
                    )
                return E.NetworkUnreachableError(f"Could not reach {reach} for {model}.", status=status)
        return None

    typed = by_name()
    if typed is not None:
        return typed
    if isinstance(exc, asyncio.TimeoutError):
        return E.TimeoutError_(f"{model} did not answer in time{where}.")
    # Unknown class: fall back on the HTTP status when there is one.
    if status == 429:
        return E.RateLimitError(f"{model} is rate limiting requests.", retry_after=retry_after_of(exc))
    if status in (401, 403):
        return E.AuthenticationError(f"{model} rejected the API key.", hint=_key_hint(model, api_base), status=status)
    if status == 407:
        return E.AuthenticationError(
            f"A proxy between myrm and {endpoint or provider} asks for credentials (HTTP 407).",
            status=status,
            hint="Give the proxy its credentials in HTTPS_PROXY (http://user:pass@proxy:port) or bypass it "
            "for this endpoint with NO_PROXY.",
        )
    if status == 404:
        return E.ModelNotFoundError(f"{lead} does not know the model {model}.", status=status)
    if status == 408:
        return E.TimeoutError_(f"{model} did not answer in time{where}.", status=status)
    if status is not None and status >= 500:
        return E.ServerError(
            f"{lead} failed on its side while serving {model} (HTTP {status}): {detail}",
            hint=server_hint,
            status=status,
        )
    if _is_context_overflow(detail):
        return E.ContextWindowExceededError(f"The conversation is larger than {model}'s context window.", status=status)
    if isinstance(exc, OSError):
        return E.NetworkUnreachableError(f"Could not reach {reach} for {model}.")
    return E.ProviderError(f"{model} failed: {detail}", status=status)
