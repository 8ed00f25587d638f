"""The model stream as a port: what the agent calls to get one model answer.

Why a Protocol and not `llm.stream.stream` itself: the agent takes the stream as a parameter so
that a replay can record what was sent and a test can script the provider (`scripted/<path>`
models aside), while the default, litellm's path, is imported on first use (seconds). Every
implementation takes the prompt as the provider sees it and yields the closed set of typed
events in `llm/events.py`; nothing else of a provider reaches the agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from myrm_tui.llm.call_settings import CallSettings
    from myrm_tui.llm.events import LLMEvent


class StreamFn(Protocol):
    """One model call: `messages` and `tools` are the provider's JSON (OpenAI chat shape), sent
    as they are; `tools` is None when the call offers none. Positional, so an implementation
    names its parameters as it likes."""

    def __call__(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: CallSettings,
        /,
    ) -> AsyncIterator[LLMEvent]: ...
