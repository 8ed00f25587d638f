"""opencode-policy: opencode's documented prune and overflow compaction (docs/benchmarks.md, "Contenders").

- Prune after every turn: walking back from the newest message, skip the last 2 user turns,
  then count tool-output tokens; outputs beyond the first 40,000 protected tokens are cleared
  (placeholder), but only if at least 20,000 tokens would be cleared.
- Overflow at window - 20,000: summary of everything; the history becomes "What did we do so
  far?" + the summary + the last user message replayed.
"""

from __future__ import annotations

from typing import Any

from bench.contenders.base import StepContender
from bench.contenders.policy_common import CLEARED, cleared

PRUNE_PROTECT = 40_000
PRUNE_MINIMUM = 20_000
PROTECTED_USER_TURNS = 2
OVERFLOW_MARGIN = 20_000


class OpencodePolicy(StepContender):
    name = "opencode-policy"
    family = "policy"
    uses_summarizer = True
    note = "prune tool outputs beyond 40k, compact at window-20k"

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        self.history: list[dict[str, Any]] = [self.system]

    def prune(self) -> bool:
        users_seen = 0
        protected = 0
        candidates: list[int] = []
        pruned_tokens = 0
        for index in range(len(self.history) - 1, 0, -1):
            message = self.history[index]
            if message.get("role") == "user":
                users_seen += 1
            if users_seen < PROTECTED_USER_TURNS or message.get("role") != "tool":
                continue
            if message.get("content") == CLEARED:
                break  # everything older was pruned before
            cost = self.counter.message(message)
            if protected + cost <= PRUNE_PROTECT:
                protected += cost
                continue
            protected = PRUNE_PROTECT  # past the protected window: everything older is a candidate
            candidates.append(index)
            pruned_tokens += cost
        if pruned_tokens < PRUNE_MINIMUM:
            return False
        for index in candidates:
            self.history[index] = cleared(self.history[index])
        return True

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += new_messages
        if self.prune():
            self.compacted = True
        if self.counter.messages(self.history) >= self.config.window - OVERFLOW_MARGIN:
            self.compact()
        return list(self.history)

    def compact(self) -> None:
        summary = self.summarizer.summarize_messages(self.history[1:])
        last_user = next((m for m in reversed(self.history) if m.get("role") == "user"), None)
        self.history = [
            self.system,
            {"role": "user", "content": "What did we do so far?"},
            {"role": "assistant", "content": summary},
        ]
        if last_user is not None:
            self.history.append(last_user)
        self.compacted = True
