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


class MissingKeyError(AuthenticationError):
    """The provider needs an API key and its variable is not set: found before anything is
    sent, so nothing is retried (the provider's client used to report it as an HTTP 500)."""

    default_hint = "Export the variable named above, then send the message again."


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

    def __init__(
        self, message: str, hint: str | None = None, *, status: int | None = 429, retry_after: float | None = None
    ):
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


class LocalModelCrashedError(LLMError):
    """The embedded model's worker process died (native crash, OOM kill) or could not load.

    Not transient: a crash that is deterministic for this CPU and prompt would crash every retry;
    the user resends (which starts a fresh worker) or switches model.
    """

    default_hint = "Send the message again to restart the local model, or switch model (Ctrl+O)."
    returncode: int | None = None
    stderr_tail: str = ""


class FirstTokenTimeoutError(TimeoutError_):
    """The server accepted the request and sent nothing within `llm_first_token_timeout`.

    Transient: an overloaded or stuck server often answers the next attempt; the retry still
    has to fit in the call's whole deadline (`llm_timeout`).
    """

    default_hint = (
        "The server accepted the request but produced nothing; it may be overloaded. "
        "Send again, or raise `llm_first_token_timeout`."
    )


class DeadlineExceededError(TimeoutError_):
    """The whole call passed `llm_timeout` (a server trickling tokens, a very long answer).

    Not transient: the deadline is for the call, retries included, so there is no time left.
    """

    transient = False
    default_hint = "What arrived before the deadline is kept. Send again, or raise `llm_timeout` for longer answers."


class MalformedResponseError(LLMError):
    """The endpoint answered, but not in the OpenAI-compatible format (stream data that is not
    JSON, an HTML page with status 200). Not transient: the same endpoint answers the same way."""

    default_hint = (
        "Check that api_base points at the server's OpenAI-compatible path (often ending "
        "in /v1) and that no proxy or login page sits in front of it."
    )


class EndpointConfigError(LLMError):
    """The endpoint settings cannot work as written (found before any request is sent)."""

    default_hint = "Fix the endpoint in your config (`myrm doctor` shows where it is set)."


class RepetitionError(LLMError):
    """The model got stuck emitting the same piece of text over and over (litellm stops such a
    stream after a fixed number of identical chunks). Not transient: the same prompt loops again."""

    default_hint = (
        "The part already shown is kept. Rephrase or send again; small local models loop "
        "like this more often than larger ones."
    )
