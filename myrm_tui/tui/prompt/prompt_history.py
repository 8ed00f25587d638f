"""Up/Down through earlier prompts, keeping the unsent draft (pure; no Textual).

The entries are this session's prompts, with the workspace's other sessions' prompts before
them once they are read (`add_older`, tui/prompt/user_prompts.py), so Up reaches yesterday's prompt in
a fresh session. `search` is the Ctrl+R-style lookup over all of them (screens/prompt_search.py).
"""

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

    def add_older(self, entries: Iterable[str]) -> None:
        """Put prompts from other sessions before the current ones; whatever the user is doing
        (browsing at an entry, or not browsing) stays where it is."""
        older: list[str] = []
        for entry in entries:
            if entry.strip() and (not older or older[-1] != entry):
                older.append(entry)
        self.entries = older + self.entries
        self._index += len(older)

    def search(self, query: str, limit: int) -> list[str]:
        """Entries containing every word of `query` (case-insensitive), newest first, each
        text once: a prompt sent ten times is one row."""
        terms = query.casefold().split()
        found: list[str] = []
        seen: set[str] = set()
        for entry in reversed(self.entries):
            if entry in seen:
                continue
            folded = entry.casefold()
            if all(term in folded for term in terms):
                found.append(entry)
                seen.add(entry)
                if len(found) >= limit:
                    break
        return found

    def jump_to(self, entry: str, current: str) -> bool:
        """Browse from `entry` (a search result) as if Up had reached it: Down walks on to newer
        prompts and then back to `current`, the draft it replaced, so picking never loses typing."""
        if entry not in self.entries:
            return False
        if not self.browsing:
            self._draft = current
        self._index = len(self.entries) - 1 - self.entries[::-1].index(entry)
        return True

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
