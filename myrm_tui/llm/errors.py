"""Typed provider errors: one class per reaction the rest of the app must have.

Each error carries one readable sentence (`message`) and what the user can do (`hint`), so
every front end prints the same thing. `transient` tells the retry loop what it may retry.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base of every provider failure that reaches the app."""

    transient = False
    default_hint = "Check the model name and provider settings with `myrm doctor`."

    def __init__(self, message: str, hint: str | None = None, *, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint or self.default_hint
        self.status = status

    def user_text(self) -> str:
        return f"{self.message} {self.hint}".strip()


class AuthenticationError(LLMError):
    default_hint = "Set the provider's API key in the environment (names: `myrm doctor`) and retry."


class ModelNotFoundError(LLMError):
    default_hint = "Pick a model that exists: `myrm models --search NAME`."


class ContextWindowExceededError(LLMError):
    default_hint = "The conversation is larger than the model's window; compact it or fork a new session."


class ContentRefusedError(LLMError):
    default_hint = "The provider refused this content; rephrase the request."


class NetworkUnreachableError(LLMError):
    transient = True
    default_hint = "Check the network or the endpoint address (api_base); the message is kept, send it again."


class RateLimitError(LLMError):
    transient = True
    default_hint = "The provider is rate limiting; wait a moment and send again."

    def __init__(self, message: str, hint: str | None = None, *, status: int | None = 429,
                 retry_after: float | None = None):
        super().__init__(message, hint, status=status)
        self.retry_after = retry_after


class ServerError(LLMError):
    transient = True
    default_hint = "The provider failed on its side; send again in a moment."


class TimeoutError_(LLMError):
    transient = True
    default_hint = "The provider took too long to answer; send again, or raise `llm_timeout`."


class StreamInterruptedError(LLMError):
    """The connection dropped mid-stream (server died, socket reset)."""

    transient = True
    default_hint = "The connection to the provider dropped mid-answer; send again."


class ProviderError(LLMError):
    """Anything the classifier could not place; never retried."""
