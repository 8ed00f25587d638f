"""The engine's own model-summary counts, read from a replay's per-turn records.

Why: cost alone cannot say whether summarizing paid off. `myrm replay` lists every summary the
agent prepared in a turn under `events[].replay.summaries` (model, level, attempts, fallback,
tokens in and out); the tally says how many were the model's (accepted by the auditor), how many
fell back to the extractive body, and what the asking cost. Contenders that report no such list
(every peer) get `available: False`, not zeros.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


@dataclass
class SummaryTally:
    available: bool = False
    summaries: int = 0
    model: int = 0  # accepted model answers (level "llm" or "terse")
    fallback: int = 0  # extractive bodies after the model's answers were rejected or failed
    attempts: int = 0  # summarizer calls, retries and escalations included
    tokens_in: int = 0
    tokens_out: int = 0
    levels: dict[str, int] = field(default_factory=dict)

    def add_events(self, events: object) -> None:
        """Count the summaries of one record's `events` (a list of stage reports)."""
        if not isinstance(events, list):
            return
        for event in events:
            replay = event.get("replay") if isinstance(event, dict) else None
            listed = replay.get("summaries") if isinstance(replay, dict) else None
            if isinstance(listed, list):
                self.available = True
                self.add(s for s in listed if isinstance(s, dict))

    def add(self, summaries: Iterable[dict[str, Any]]) -> None:
        for summary in summaries:
            self.summaries += 1
            if summary.get("fallback"):
                self.fallback += 1
            else:
                self.model += 1
            level = str(summary.get("level"))
            self.levels[level] = self.levels.get(level, 0) + 1
            self.attempts += _int(summary.get("attempts"))
            self.tokens_in += _int(summary.get("tokens_in"))
            self.tokens_out += _int(summary.get("tokens_out"))

    def as_dict(self) -> dict[str, Any]:
        if not self.available:
            return {"available": False}  # no counts to compare: not zeros
        return {
            "available": self.available,
            "summaries": self.summaries,
            "model": self.model,
            "fallback": self.fallback,
            "attempts": self.attempts,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "levels": dict(sorted(self.levels.items())),
        }


def summary_line(tally: dict[str, Any]) -> str:
    """`55 model / 3 fallback of 58, 79 attempts, 217,975 in / 38,588 out` (a tally's `as_dict`)."""
    if not tally.get("available"):
        return "n/a"
    return (
        f"{tally['model']} model / {tally['fallback']} fallback of {tally['summaries']}, "
        f"{tally['attempts']} attempts, {tally['tokens_in']:,} in / {tally['tokens_out']:,} out"
    )
