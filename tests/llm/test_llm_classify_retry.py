"""Error classification, Retry-After parsing, backoff policy, and the lazy-import rule."""

from __future__ import annotations

import subprocess
import sys

import httpx

import myrm_tui  # noqa: F401
from myrm_tui.llm import errors, retry_policy
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.classify import classify, retry_after_of, scrub
from myrm_tui.llm.stream import completion_kwargs

MODEL = "anthropic/claude-x"


def _litellm():
    import litellm

    return litellm


def test_litellm_exceptions_map_to_typed_errors():
    litellm = _litellm()
    cases = [
        (litellm.AuthenticationError("bad key", llm_provider="anthropic", model=MODEL), errors.AuthenticationError),
        (litellm.NotFoundError("no", model=MODEL, llm_provider="anthropic"), errors.ModelNotFoundError),
        (
            litellm.ContextWindowExceededError("too big", model=MODEL, llm_provider="anthropic"),
            errors.ContextWindowExceededError,
        ),
        (litellm.ContentPolicyViolationError("no", model=MODEL, llm_provider="anthropic"), errors.ContentRefusedError),
        (litellm.RateLimitError("slow", llm_provider="anthropic", model=MODEL), errors.RateLimitError),
        (litellm.Timeout("slow", model=MODEL, llm_provider="anthropic"), errors.TimeoutError_),
        (litellm.APIConnectionError("down", llm_provider="anthropic", model=MODEL), errors.NetworkUnreachableError),
        (litellm.InternalServerError("boom", llm_provider="anthropic", model=MODEL), errors.ServerError),
        (litellm.ServiceUnavailableError("busy", llm_provider="anthropic", model=MODEL), errors.ServerError),
        (
            litellm.BadRequestError(
                "prompt is too long: 210000 tokens > 200000 maximum", model=MODEL, llm_provider="anthropic"
            ),
            errors.ContextWindowExceededError,
        ),
        (
            litellm.BadRequestError("temperature must be <= 1", model=MODEL, llm_provider="anthropic"),
            errors.ProviderError,
        ),
        (httpx.ConnectError("refused"), errors.NetworkUnreachableError),
        (ConnectionResetError(104, "reset"), errors.NetworkUnreachableError),
        (httpx.ReadTimeout("slow"), errors.TimeoutError_),
    ]
    for exc, expected in cases:
        typed = classify(exc, MODEL)
        assert type(typed) is expected, (exc, typed)
        assert MODEL in typed.message or "anthropic" in typed.message
        assert typed.user_text().endswith(typed.hint)


def test_auth_message_is_one_sentence_naming_the_model():
    litellm = _litellm()
    typed = classify(litellm.AuthenticationError("x", llm_provider="anthropic", model=MODEL), MODEL)
    assert typed.message == "anthropic/claude-x rejected the API key."
    assert not typed.transient


def test_midstream_wrapper_is_unwrapped():
    litellm = _litellm()
    inner = litellm.AuthenticationError("bad", llm_provider="anthropic", model=MODEL)
    from litellm.exceptions import MidStreamFallbackError

    wrapped = MidStreamFallbackError("wrapped", model=MODEL, llm_provider="anthropic", original_exception=inner)
    assert isinstance(classify(wrapped, MODEL), errors.AuthenticationError)


def test_connection_error_hidden_under_internal_server_error():
    litellm = _litellm()
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except ConnectionRefusedError as cause:
            raise litellm.InternalServerError("Connection error.", llm_provider="openai", model="openai/x") from cause
    except litellm.InternalServerError as exc:
        typed = classify(exc, "openai/x", api_base="http://127.0.0.1:1/v1")
    assert isinstance(typed, errors.NetworkUnreachableError)
    assert "http://127.0.0.1:1/v1" in typed.message


def test_provider_text_is_scrubbed_of_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "my-very-secret-value-42")
    litellm = _litellm()
    exc = litellm.BadRequestError(
        "invalid header for key my-very-secret-value-42 and sk-abcdefghijklmnop",
        model="openai/x",
        llm_provider="openai",
    )
    text = classify(exc, "openai/x").user_text()
    assert "my-very-secret-value-42" not in text and "sk-abcdefghijklmnop" not in text
    assert "[redacted]" in text
    assert "Bearer [redacted]" in scrub("Authorization: Bearer abc.def.ghi")


def test_retry_after_from_attribute_headers_and_http_date():
    litellm = _litellm()
    assert retry_after_of(litellm.RateLimitError("x", llm_provider="p", model="m", headers={"Retry-After": "7"})) == 7.0
    response = httpx.Response(429, headers={"retry-after-ms": "1500"}, request=httpx.Request("POST", "http://x"))
    assert retry_after_of(litellm.RateLimitError("x", llm_provider="p", model="m", response=response)) == 1.5

    class WithAttr(Exception):
        retry_after = 3

    assert retry_after_of(WithAttr()) == 3.0
    assert retry_after_of(Exception()) is None  # WithAttr's base, without the attribute
    past = httpx.Response(
        429, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, request=httpx.Request("POST", "http://x")
    )
    assert retry_after_of(litellm.RateLimitError("x", llm_provider="p", model="m", response=past)) == 0.0


def test_backoff_is_full_jitter_capped_and_honours_retry_after():
    assert retry_policy.backoff_delay(1, rand=lambda: 1.0) == retry_policy.BACKOFF_BASE_S
    assert retry_policy.backoff_delay(3, rand=lambda: 1.0) == retry_policy.BACKOFF_BASE_S * 4
    assert retry_policy.backoff_delay(50, rand=lambda: 1.0) == retry_policy.BACKOFF_CAP_S
    assert retry_policy.backoff_delay(2, rand=lambda: 0.0) == 0.0
    assert retry_policy.backoff_delay(1, retry_after=2.5) == 2.5
    assert retry_policy.backoff_delay(1, retry_after=10_000) == retry_policy.RETRY_AFTER_CAP_S


def test_completion_kwargs_own_retries_and_scope_prompt_cache_key():
    s = CallSettings(max_output_tokens=100, prompt_cache_key="sess-1", timeout_s=12)
    native = completion_kwargs("openai/gpt-4o", [], None, s)
    assert native["num_retries"] == 0 and native["stream"] is True
    assert native["stream_options"] == {"include_usage": True}
    assert native["prompt_cache_key"] == "sess-1" and native["max_tokens"] == 100 and native["timeout"] == 12
    assert "prompt_cache_key" in completion_kwargs("gpt-4o", [], None, s)
    assert "prompt_cache_key" not in completion_kwargs("anthropic/claude-x", [], None, s)
    custom = CallSettings(prompt_cache_key="sess-1", api_base="http://127.0.0.1:9/v1")
    kwargs = completion_kwargs("openai/local", [], [{"type": "function"}], custom)
    assert "prompt_cache_key" not in kwargs and kwargs["api_base"] == "http://127.0.0.1:9/v1"
    assert kwargs["tools"] == [{"type": "function"}]


def test_importing_llm_modules_does_not_import_litellm():
    code = (
        "import sys, myrm_tui.llm.stream, myrm_tui.llm.models.registry, myrm_tui.llm.models.defaults, "
        "myrm_tui.llm.providers, myrm_tui.llm.fake_providers.scripted, myrm_tui.llm.local.provider, "
        "myrm_tui.llm.classify; "
        "assert 'litellm' not in sys.modules, 'litellm imported'; "
        "assert 'llama_cpp' not in sys.modules, 'llama_cpp imported'; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_default_model_lookup_without_key_does_not_load_llama_cpp():
    code = (
        "import sys, myrm_tui; from myrm_tui.llm.models.defaults import default_model; default_model({}); "
        "assert 'llama_cpp' not in sys.modules; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr


async def test_a_model_stuck_in_a_loop_is_named_as_such_not_as_a_dropped_connection(tmp_path):
    """litellm stops a stream of identical chunks; the user must hear that the model looped (and
    it is not retried: the same prompt loops again), not that the network dropped."""
    import json

    from myrm_tui.llm.events import TextDelta
    from myrm_tui.llm.stream import stream

    script = tmp_path / "loop.json"
    script.write_text(json.dumps({"turns": [{"text": "la " * 400, "chunk_size": 3}]}))
    seen: list[str] = []
    try:
        async for event in stream(
            f"scripted/{script}", [{"role": "user", "content": "sing"}], None, CallSettings(max_attempts=3)
        ):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    except errors.LLMError as exc:
        failure = exc
    else:
        raise AssertionError("the loop was not stopped")
    assert type(failure) is errors.RepetitionError, failure
    assert "repeating the same text" in failure.message and failure.transient is False
    assert seen, "the part already streamed reached the consumer"
