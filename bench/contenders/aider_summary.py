"""aider's `ChatSummary` (PyPI aider-chat, Apache-2.0), driven as aider drives it.

aider summarizes only `done_messages` (earlier exchanges); the current exchange is sent as is.
So per turn: prompt = system + done + this turn's messages; then the turn joins `done`, and if
`too_big(done)`, `summarize(done)` runs (synchronously here; aider runs it in a thread and swaps
the result in at the next send, which gives the same prompts).

aider has no tool role of its own and its summarizer concatenates string contents, so contents
are flattened to text (None -> "", list parts -> text, images -> "[image]"); tool messages are
passed through as they are (aider's summary skips them). A stub model supplies the shared
counter and the fake summarizer (fed only the transcript aider sends). Two rows: `aider` with its
own history budget, min(max(window/16, 1024), 8192), and `aider@budget` with the shared budget.
"""

from __future__ import annotations

from typing import Any

from bench.contenders.base import StepContender, content_text

OWN_MIN, OWN_MAX, OWN_DIVISOR = 1024, 8192, 16


class _StubModel:
    def __init__(self, contender: Aider) -> None:
        self.name = "bench-stub"
        self.info = {"max_input_tokens": contender.config.window}
        self._contender = contender

    def token_count(self, message: Any) -> int:
        if isinstance(message, list):
            return self._contender.counter.messages(message)
        return self._contender.counter.message(message)

    def simple_send_with_retries(self, messages: list[dict[str, Any]]) -> str:
        transcript = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        return self._contender.summarizer.summarize_text(transcript)


class Aider(StepContender):
    name = "aider"
    family = "peer"
    uses_summarizer = True
    note = "aider ChatSummary, own history budget (window/16, 1k-8k)"
    budget_matched = False

    def missing(self) -> str | None:
        try:
            from aider.history import ChatSummary  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__}: {exc}); run bash bench/setup.sh"
        return None

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        from aider.history import ChatSummary

        limit = self.budget if self.budget_matched else min(max(self.config.window // OWN_DIVISOR, OWN_MIN), OWN_MAX)
        self.summary = ChatSummary([_StubModel(self)], max_tokens=limit)
        self.done: list[dict[str, Any]] = []

    @staticmethod
    def flatten(message: dict[str, Any]) -> dict[str, Any]:
        content = message.get("content")
        if isinstance(content, str):
            return message
        return {**message, "content": content_text(content)}

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        current = [self.flatten(m) for m in new_messages]
        prompt = [self.system, *self.done, *current]
        self.done += current
        if self.summary.too_big(self.done):
            self.done = self.summary.summarize(self.done)
            self.compacted = True
        return prompt


class AiderAtBudget(Aider):
    name = "aider@budget"
    note = "aider ChatSummary, history budget = shared budget"
    budget_matched = True
