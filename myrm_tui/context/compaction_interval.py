"""When a compaction pays for itself: the economic trigger of the ladder.

Why: with a prompt cache, every request re-reads the whole prompt at the cache-read price, and a
compaction re-writes what stays after it at the cache-write price. Waiting for the emergency
threshold is right when the prompt grows fast (tool-heavy turns reach it within a few turns),
but a slowly growing chat sits near the threshold for hundreds of turns, re-reading tokens it
could have dropped: on the 400-turn chatty replay at 64k that was 1.36x the cost of a peer that
keeps a small history (docs/benchmarks.md, "Prefix and cost").

The rule is the rent-or-buy one: keep a running sum of what each request re-read above the
prompt's floor (the size the last compaction left, or the event target when larger); once that
excess, at the read price, costs as much as re-writing the floor once, the next event is due.
For a steady growth g per request this fires at floor + sqrt(2 · ratio · floor · g), the interval
that minimises reads plus re-writes (ratio = write price ÷ read price). It needs no estimate of
g, and fast-growing sessions reach the emergency threshold first, so it never fires for them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CompactionInterval:
    """Excess re-read since the last event, and the floor it is measured from."""

    floor: int = 0  # prompt tokens the last event left (0: no event yet)
    excess: int = 0  # Σ over requests since then of (prompt tokens − floor), where positive

    def note_request(self, tokens: int, target: int) -> None:
        """One assembled request of `tokens`; `target`: the event target in tokens (a floor below
        it would make an event that has nothing to remove)."""
        self.excess += max(0, tokens - max(self.floor, target))

    def progress(self, target: int, price_ratio: float) -> float:
        """How far to the next economic event, 0..1 and beyond (1 = due): the background summary
        step prepares the chunk the event will remove once this is well on the way."""
        floor = max(self.floor, target)
        return self.excess / (price_ratio * floor) if floor > 0 else 0.0

    def reset(self, after: int) -> None:
        """An event ran (whatever triggered it): measure from what it left."""
        self.floor = after
        self.excess = 0
