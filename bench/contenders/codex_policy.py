"""codex-policy: Codex CLI's documented local compaction (docs/benchmarks.md, "Contenders").

- Tool outputs are capped at ingestion (10 KiB, head + tail), as the model view does.
- At 90% of the budget: one summary of everything, then the new history is the system prompt,
  the most recent user messages verbatim up to 20,000 tokens (the oldest kept one truncated),
  and the summary behind a bridge line.
"""

from __future__ import annotations

from typing import Any

from bench.contenders.base import StepContender, content_text
from bench.contenders.policy_common import head_tail

TRIGGER_SHARE = 0.90
TOOL_OUTPUT_MAX_CHARS = 10_240
USER_MESSAGES_MAX_TOKENS = 20_000
BRIDGE = "Another language model started this task and produced a summary of its work so far:\n\n"


class CodexPolicy(StepContender):
    name = "codex-policy"
    family = "policy"
    uses_summarizer = True
    note = "compact at 90%: summary + recent user messages (<=20k)"

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        self.history: list[dict[str, Any]] = [self.system]

    def ingest(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("role") == "tool" and isinstance(message.get("content"), str):
            text = head_tail(message["content"], TOOL_OUTPUT_MAX_CHARS)
            if text is not message["content"]:
                return {**message, "content": text}
        return message

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += [self.ingest(m) for m in new_messages]
        if self.counter.messages(self.history) > TRIGGER_SHARE * self.budget:
            self.compact()
        return list(self.history)

    def compact(self) -> None:
        summary = self.summarizer.summarize_messages(self.history[1:])
        kept: list[dict[str, Any]] = []
        used = 0
        for message in reversed(self.history[1:]):
            if message.get("role") != "user":
                continue
            cost = self.counter.message(message)
            if used + cost > USER_MESSAGES_MAX_TOKENS:
                room_chars = max(0, (USER_MESSAGES_MAX_TOKENS - used) * 4)
                if room_chars > 200:
                    kept.append({"role": "user", "content": head_tail(content_text(message["content"]), room_chars)})
                break
            kept.append(message)
            used += cost
        kept.reverse()
        self.history = [self.system, *kept, {"role": "user", "content": BRIDGE + summary}]
        self.compacted = True
