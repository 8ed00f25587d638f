"""A direct streaming client for the user's own OpenAI-compatible server (`openai/NAME` with an
`api_base`: llama.cpp, vLLM, Ollama's /v1, LM Studio, a gateway).

Why not litellm for these: importing litellm costs 5-8 s (more on a loaded machine), and a
`myrm run` against a server that answers in a millisecond paid it on every call (issue 27:
6.5 s, 60x `myrm --help`). For this one wire format litellm translates nothing: the request is
the OpenAI chat body we already build, the answer is OpenAI's SSE chunks our assembler already
reads. Every other provider (hosted OpenAI, whose reasoning models need litellm's parameter
renames, Anthropic, Gemini, Bedrock, the embedded and scripted models) still goes through
litellm: one code path per provider family.

What stays the same as the litellm path, by construction: the body (`completion_kwargs`, minus the
arguments only litellm reads), the key (the call's `api_key`, else OPENAI_API_KEY, the variable
litellm reads for `openai/`), and the errors: HTTP failures are raised as exceptions named like the
OpenAI client's (AuthenticationError for 401, ...) carrying the status and headers, transport
failures are httpx's own, and bad stream data is a JSONDecodeError, so `classify` names every
failure with the same sentence on both paths.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

# The provider prefix of the models this client serves (litellm's name for the OpenAI wire format).
PREFIX = "openai/"
# The variable litellm reads for an `openai/` key; read the same way here.
KEY_VAR = "OPENAI_API_KEY"
# Arguments of `completion_kwargs` that configure litellm itself, never part of the request body.
_CLIENT_ONLY = frozenset({"model", "num_retries", "timeout", "api_base", "api_key"})
# How long to wait for the TCP (and TLS) connection: a server that is down answers at once, one
# that is unreachable should fail well before the call's own deadline (llm_timeout) would.
CONNECT_TIMEOUT_S = 30.0
# The most of an error body we keep to quote (classify shortens it further).
ERROR_BODY_MAX_BYTES = 64_000

# The OpenAI client's exception names per HTTP status: `classify` matches on these names.
_STATUS_NAMES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}


def serves(model: str, api_base: str | None) -> bool:
    """True when a call to `model` goes through this client: the OpenAI wire format at an endpoint
    the user configured. OpenAI's own API stays on litellm (it renames parameters per model)."""
    return bool(api_base) and model.startswith(PREFIX)


class APIStatusError(Exception):
    """The server answered with an HTTP error status. Subclasses carry the OpenAI client's names."""

    def __init__(self, message: str, *, status_code: int, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.headers = dict(headers)


class InternalServerError(APIStatusError):
    """5xx: the server failed (retried)."""


_STATUS_CLASSES: dict[int, type[APIStatusError]] = {
    status: type(name, (APIStatusError,), {"__doc__": f"HTTP {status}."}) for status, name in _STATUS_NAMES.items()
}


def status_error(status: int, message: str, headers: Mapping[str, str]) -> APIStatusError:
    """The exception for an HTTP error status, named as the OpenAI client names it."""
    cls = _STATUS_CLASSES.get(status) or (InternalServerError if status >= 500 else APIStatusError)
    return cls(message, status_code=status, headers=headers)


def error_message(body: bytes) -> str:
    """The server's own words: `error.message` of an OpenAI-shaped error body, else the body."""
    text = body[:ERROR_BODY_MAX_BYTES].decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str) and error:
        return error
    return text


def request_body(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body for `completion_kwargs(...)`: the model without its provider prefix, nothing
    that only configures litellm, and no message field set to None (litellm leaves those out: an
    assistant turn that only called tools has no `content` key, which strict servers require)."""
    body = {key: value for key, value in kwargs.items() if key not in _CLIENT_ONLY}
    body["model"] = str(kwargs["model"]).removeprefix(PREFIX)
    body["messages"] = [
        {key: value for key, value in message.items() if value is not None} if isinstance(message, dict) else message
        for message in kwargs.get("messages") or ()
    ]
    return body


def completions_url(api_base: str) -> str:
    """`{api_base}/chat/completions`, keeping a query string the user put on the base."""
    parts = urlsplit(api_base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def api_key(kwargs: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    return kwargs.get("api_key") or env.get(KEY_VAR) or None


class ChunkStream:
    """One streamed answer: the decoded `data:` payloads of the SSE body, as chunk dicts.

    `content_type` is what the server said it sent (an HTML login page answered with 200 shows
    here, and the caller names it); `aclose()` drops the connection, also mid-answer."""

    def __init__(self, client: httpx.AsyncClient, response: httpx.Response, messages: list[Any]) -> None:
        self._client = client
        self._response = response
        self._messages = messages
        self.content_type: str | None = response.headers.get("content-type")
        self._chunks = self._with_usage()

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._chunks

    async def _with_usage(self) -> AsyncIterator[dict[str, Any]]:
        """The chunks, then an estimated usage chunk when the server produced output but reported
        no usage (llama-cpp-python's server ignores `stream_options`), as litellm does for the
        same request: the totals a turn records stay filled on both paths."""
        produced: list[str] = []
        reported = False
        async for chunk in self._events():
            reported = reported or bool(chunk.get("usage"))
            produced += _output_texts(chunk)
            yield chunk
        if produced and not reported:
            yield {"choices": [], "usage": estimated_usage(self._messages, "".join(produced))}

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        data: list[str] = []
        async for line in self._response.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
                continue
            if line or not data:
                continue  # comments (": keep-alive"), event names, ids, and blank keep-alives
            payload, data = "\n".join(data), []
            if payload.strip() == "[DONE]":
                return
            yield _chunk(payload)
        if data and "\n".join(data).strip() != "[DONE]":
            yield _chunk("\n".join(data))

    async def aclose(self) -> None:
        try:
            await self._chunks.aclose()  # type: ignore[attr-defined]
            await self._response.aclose()
        finally:
            await self._client.aclose()


# litellm's estimate for a chat message's framing (role markers, separators), in tokens.
MESSAGE_OVERHEAD_TOKENS = 4
# The tokenizer of the estimate: the one litellm falls back on for models it does not know.
ESTIMATE_ENCODING = "cl100k_base"


def _output_texts(chunk: Mapping[str, Any]) -> list[str]:
    """What the model produced in a chunk (text, reasoning, tool-call pieces)."""
    out: list[str] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        out += [str(delta[key]) for key in ("content", "reasoning_content") if delta.get(key)]
        for call in delta.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                out += [str(function[key]) for key in ("name", "arguments") if function.get(key)]
    return out


def estimated_usage(messages: list[Any], completion: str) -> dict[str, int]:
    """Prompt and completion tokens counted with tiktoken (already loaded by the context engine's
    counts; offline, from litellm's bundled files): an estimate where the server gave none."""
    import tiktoken

    from myrm_tui.messages import content_text

    encoding = tiktoken.get_encoding(ESTIMATE_ENCODING)

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=())) if text else 0

    prompt = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        prompt += MESSAGE_OVERHEAD_TOKENS + count(content_text(message.get("content"), image=None))
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                prompt += count(f"{function.get('name') or ''}{function.get('arguments') or ''}")
    completion_tokens = count(completion)
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens, "total_tokens": prompt + completion_tokens}


def _chunk(payload: str) -> dict[str, Any]:
    """One event's payload as a chunk; an error event mid-stream raises like an HTTP error."""
    value = json.loads(payload)  # a JSONDecodeError is the stream's data being malformed
    if not isinstance(value, dict):
        raise json.JSONDecodeError("stream data is not a JSON object", payload, 0)
    error = value.get("error")
    if error and not value.get("choices"):
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and not isinstance(code, bool) else 500
        raise status_error(status, error_message(payload.encode()), {})
    return value


@functools.cache
def tls_context() -> Any:
    """httpx's default TLS context (its CA bundle, its settings), built once per process: building
    it reads and parses the whole CA bundle (50-100 ms, seconds on a loaded box) and httpx builds
    one for every client, so every call paid it, on the caller's event loop. Not session state:
    the same for every call. The chat builds it in its warm-up thread (`prewarm`)."""
    import httpx

    return httpx.create_ssl_context()


def prewarm() -> None:
    """Load what the first call needs (httpx, httpcore, the TLS context) off the caller's loop:
    the chat's first message after start paid ~1 s of it on a loaded box (bench/tui_first_message.py)."""
    import httpcore  # noqa: F401 - httpx imports it on the first client, not at its own import

    tls_context()


async def acompletion(**kwargs: Any) -> ChunkStream:
    """POST the chat request and return its stream once the server answered with a success
    status; an error status raises (named like the OpenAI client's errors), having read the body."""
    import httpx

    api_base = str(kwargs["api_base"])
    if urlsplit(api_base).username is not None:
        # The same refusal as the OpenAI client's: it will not send a key as a Bearer header to a
        # URL that carries a user name and password. Nothing is sent (classify names it).
        raise ValueError("api_base carries a user name and password and a key would be sent as well")
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    key = api_key(kwargs)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    read_timeout = kwargs.get("timeout")
    timeout = httpx.Timeout(read_timeout if isinstance(read_timeout, (int, float)) else None, connect=CONNECT_TIMEOUT_S)
    client = httpx.AsyncClient(timeout=timeout, verify=tls_context())
    try:
        payload = request_body(kwargs)
        request = client.build_request("POST", completions_url(api_base), content=json.dumps(payload), headers=headers)
        response = await client.send(request, stream=True)
        if response.status_code >= 400:
            body = await response.aread()
            await response.aclose()
            raise status_error(response.status_code, error_message(body), response.headers)
    except BaseException:
        await client.aclose()
        raise
    return ChunkStream(client, response, payload["messages"])
