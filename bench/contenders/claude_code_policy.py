"""claude-code-policy: Claude Code's documented tiers (docs/benchmarks.md, "Contenders";
community figures).

- Tool results over 30,000 characters are truncated at ingestion (Bash's output cap).
- Near 83% of the budget, microcompact first: clear every tool result but the 5 most recent.
- If still over 83%: compact into a summary, then restore up to 5 most recently read files
  (each at most 5,000 tokens, else only its path) and the latest user message.
"""

from __future__ import annotations

import json
from typing import Any

from bench.contenders.base import StepContender, content_text
from bench.contenders.policy_common import CLEARED, cleared, head_tail

TRIGGER_SHARE = 0.83
TOOL_OUTPUT_MAX_CHARS = 30_000
KEEP_RECENT_RESULTS = 5
RESTORE_FILES = 5
RESTORE_FILE_MAX_TOKENS = 5_000


class ClaudeCodePolicy(StepContender):
    name = "claude-code-policy"
    family = "policy"
    uses_summarizer = True
    note = "microcompact old tool results, compact at 83% + restore 5 files"

    def setup(self, *args: Any) -> None:
        super().setup(*args)
        self.history: list[dict[str, Any]] = [self.system]
        self.reads: dict[str, str] = {}  # path -> latest read output, most recent last
        self.call_args: dict[str, tuple[str, dict[str, Any]]] = {}

    def ingest(self, message: dict[str, Any]) -> dict[str, Any]:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            try:
                args = json.loads(function.get("arguments") or "{}")
            except ValueError:
                args = {}
            self.call_args[call.get("id", "")] = (function.get("name", ""), args if isinstance(args, dict) else {})
        if message.get("role") == "tool" and isinstance(message.get("content"), str):
            name, args = self.call_args.get(message.get("tool_call_id", ""), ("", {}))
            if name == "file_read" and "path" in args:
                self.reads.pop(args["path"], None)
                self.reads[args["path"]] = message["content"]
            text = head_tail(message["content"], TOOL_OUTPUT_MAX_CHARS)
            if text is not message["content"]:
                return {**message, "content": text}
        return message

    def over(self) -> bool:
        return self.counter.messages(self.history) > TRIGGER_SHARE * self.budget

    def step(self, new_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.history += [self.ingest(m) for m in new_messages]
        if self.over():
            self.microcompact()
            if self.over():
                self.compact()
        return list(self.history)

    def microcompact(self) -> None:
        results = [i for i, m in enumerate(self.history) if m.get("role") == "tool"]
        for index in results[:-KEEP_RECENT_RESULTS]:
            if self.history[index].get("content") != CLEARED:
                self.history[index] = cleared(self.history[index])
                self.compacted = True

    def compact(self) -> None:
        summary = self.summarizer.summarize_messages(self.history[1:])
        restored = []
        for path, output in list(self.reads.items())[-RESTORE_FILES:]:
            if self.counter.text(output) <= RESTORE_FILE_MAX_TOKENS:
                restored.append(f"Contents of {path}:\n{output}")
            else:
                restored.append(f"{path} (too large to restore; read it again if needed)")
        last_user = next((m for m in reversed(self.history) if m.get("role") == "user"), None)
        body = "This session is being continued from a previous conversation. Summary:\n\n" + summary
        if restored:
            body += "\n\nRecently read files:\n\n" + "\n\n".join(restored)
        self.history = [
            self.system,
            {"role": "user", "content": body},
            {"role": "assistant", "content": "Understood; continuing from the summary."},
        ]
        if last_user is not None:
            self.history.append(
                {"role": "user", "content": content_text(last_user.get("content"))}
                if isinstance(last_user.get("content"), list)
                else last_user
            )
        self.compacted = True
