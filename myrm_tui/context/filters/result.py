"""The filter's answer to the engine."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FilterResult:
    """An excerpt that fits the budget. `text` holds real lines of the output (or prefixes
    of them) and marker lines (`… N lines omitted … `); the engine adds the header with the
    vault handle."""

    text: str
    kind: str  # the filter that produced it: "pytest", "git-diff", "json", "log", "head-tail", …
    original_chars: int
    original_lines: int
    shown_lines: int
    important_lines: int  # errors/failures/summary lines kept
