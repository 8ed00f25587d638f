"""hermes-agent's `ContextCompressor` (PyPI hermes-agent, MIT), driven as hermes drives it.

Per turn (docs/benchmarks.md, "Contenders"): append the turn, estimate with hermes's own rough counter, and
if `should_compress` says so, `compress`; then report the prompt size as the provider's usage
(`update_from_response`) with the shared counter. The summarizer hermes calls
(`agent.context_compressor.call_llm`) is replaced by the shared fake, fed only the transcript
part of hermes's prompt (after "TURNS TO SUMMARIZE:" / the previous summary plus "NEW TURNS TO
INCORPORATE:"), so hermes's template wording never reaches the summary.

Two rows: `hermes` with its own thresholds (derived from the window and the output reserve) and
`hermes@budget` with threshold = the shared budget and tail = 20% of it (the
budget-matched setting of docs/benchmarks.md).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from types import SimpleNamespace
from typing import Any

from bench.contenders.base import StepContender

MODEL = "gpt-4o"
TAIL_SHARE = 0.20
FROZEN_NOW = _dt.datetime(2025, 3, 14, 12, 0, tzinfo=_dt.UTC)  # hermes puts today's date in its prompt
_SECTION_END = re.compile(r"\n\n(?:Use this exact structure|Update the summary using this exact structure)")


def transcript_of(prompt: str) -> str:
    """The part of hermes's summary prompt that comes from the conversation."""
    pieces = []
    if "PREVIOUS SUMMARY:\n" in prompt:
        pieces.append(prompt.split("PREVIOUS SUMMARY:\n", 1)[1].split("\n\nNEW TURNS TO INCORPORATE:", 1)[0])
    for marker in ("NEW TURNS TO INCORPORATE:\n", "TURNS TO SUMMARIZE:\n"):
        if marker in prompt:
            body = prompt.split(marker, 1)[1]
            pieces.append(_SECTION_END.split(body, 1)[0])
            break
    return "\n\n".join(pieces) if pieces else prompt


class Hermes(StepContender):
    name = "hermes"
    family = "peer"
    uses_summarizer = True
    note = "hermes-agent ContextCompressor, its own thresholds"
    budget_matched = False

    def missing(self) -> str | None:
        try:
            import agent.context_compressor  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - any import failure means "not installed here"
            return f"not installed ({type(exc).__name__}: {exc}); run bash bench/setup.sh"
        return None

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        os.environ.setdefault("HERMES_QUIET", "1")
        import agent.context_compressor as cc
        from agent.model_metadata import estimate_messages_tokens_rough

        try:
            import hermes_time

            hermes_time.now = lambda: FROZEN_NOW
        except Exception:  # noqa: BLE001, S110 - older layouts have no hermes_time; the date then drifts
            pass
        cc.call_llm = self._call_llm
        self.estimate = estimate_messages_tokens_rough
        self.compressor = cc.ContextCompressor(
            MODEL, config_context_length=self.config.window, max_tokens=self.config.reserve, quiet_mode=True
        )
        if self.budget_matched:
            self.compressor.threshold_tokens = self.budget
            self.compressor.tail_token_budget = int(TAIL_SHARE * self.budget)
        self.history: list[dict[str, Any]] = [dict(self.system)]

    def _call_llm(self, *args: Any, **kwargs: Any) -> Any:
        messages = kwargs.get("messages") or (args[0] if args else [])
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        summary = self.summarizer.summarize_text(transcript_of(prompt))
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=summary))])

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += new_messages
        estimate = self.estimate(self.history)
        if self.compressor.should_compress(estimate):
            self.history = self.compressor.compress(self.history, current_tokens=estimate)
            self.compacted = True
        self.compressor.update_from_response(
            {"prompt_tokens": self.counter.messages(self.history) + self.tool_tokens, "completion_tokens": 0}
        )
        return self.history


class HermesAtBudget(Hermes):
    name = "hermes@budget"
    note = "hermes-agent ContextCompressor, threshold = shared budget, tail 20%"
    budget_matched = True
