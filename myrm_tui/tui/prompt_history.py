"""Up/Down through earlier prompts, keeping the unsent draft (pure; no Textual)."""

from __future__ import annotations

from collections.abc import Iterable


class PromptHistory:
    """Entries oldest first. Browsing starts past the newest; the draft typed before the first
    Up comes back when Down walks past the newest entry, so browsing never loses typing."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries: list[str] = []
        for entry in entries:
            self.add(entry)
        self._index = len(self.entries)
        self._draft = ""

    def add(self, entry: str) -> None:
        if entry.strip() and (not self.entries or self.entries[-1] != entry):
            self.entries.append(entry)
        self._index = len(self.entries)
        self._draft = ""

    @property
    def browsing(self) -> bool:
        return self._index < len(self.entries)

    def previous(self, current: str) -> str | None:
        """The entry before the current one, or None at the oldest."""
        if self._index == 0:
            return None
        if not self.browsing:
            self._draft = current
        self._index -= 1
        return self.entries[self._index]

    def next(self) -> str | None:
        """The entry after the current one, the draft past the newest, None when not browsing."""
        if not self.browsing:
            return None
        self._index += 1
        return self.entries[self._index] if self.browsing else self._draft
