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
g to fire.

The gate: the rule prices an event as one re-write of the floor, and leaves out what else an
event costs: the prefix break it causes in a session that breaks it often anyway, and the
summarizer tokens spent preparing the chunk it removes (each event pays them; more events pay
them more often). For a slow chat those are small next to the reads saved; for tool-heavy
sessions, whose prompt grows by one or more tool outputs per turn, the rule fired too (coding
64k: 24 → 35 events, prefix 0.918 → 0.891) and cost more than it saved (tool-storm 64k: +5 %).
So the trigger only counts as due while the measured growth per user turn, over the last
`GROWTH_WINDOW` requests, stays under `SLOW_GROWTH_TOKENS`: a session of chat exchanges, not
of tool outputs.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

# Requests the growth is averaged over: long enough that one short exchange between two tool
# outputs does not open the gate, short enough that a session turning from tool work to chat
# is recognised within a few minutes of conversation (20 chat turns, or 8-9 coding turns).
GROWTH_WINDOW = 20
# Mean prompt growth per user turn (tokens, as the ladder counts them) under which a session is
# a slow chat. Per turn, not per request: a coding turn's steps that only carry a tool call are as
# small as a chat exchange, so per request the two overlap (chatty 185-305, coding 424-1,324 over
# 20 requests) where per turn they do not (chatty the same, coding 939-2,944; tool-storm in
# docs/benchmarks.md, "Economic trigger, gated"; 400-turn replays, seed 1, 32k and 64k). 600 is
# about a 450-word exchange: twice the replay's chat turn, under any coding turn measured.
SLOW_GROWTH_TOKENS = 600
# User turns measured before a compaction runs ahead of the next one (`largest_turn_growth`):
# two, so one odd turn (a session's first file read) is not the only estimate; a coding window
# of 20 requests holds 8-9 turns, a chat's 20.
AHEAD_MIN_TURNS = 2


@dataclass
class CompactionInterval:
    """Excess re-read since the last event, the floor it is measured from, and the recent growth."""

    floor: int = 0  # prompt tokens the last event left (0: no event yet)
    excess: int = 0  # Σ over requests since then of (prompt tokens − floor), where positive
    last: int | None = None  # the previous request's tokens (None: none since the last event)
    # (growth over the previous request, the user turn it belongs to) for the newest requests
    growth: deque[tuple[int, int | None]] = field(default_factory=lambda: deque(maxlen=GROWTH_WINDOW))

    def note_request(self, tokens: int, target: int, turn: int | None = None) -> None:
        """One assembled request of `tokens`; `target`: the event target in tokens (a floor below
        it would make an event that has nothing to remove); `turn`: which user turn it belongs to
        (the row of the latest user message)."""
        self.excess += max(0, tokens - max(self.floor, target))
        if self.last is not None:
            self.growth.append((max(0, tokens - self.last), turn))
        self.last = tokens

    def growth_per_turn(self) -> float | None:
        """Mean growth per user turn over the window (None until the window is full). One long
        agentic turn is one turn: all its tool outputs count against it."""
        if len(self.growth) < GROWTH_WINDOW:
            return None
        return sum(g for g, _ in self.growth) / len({turn for _, turn in self.growth})

    def largest_turn_growth(self) -> int | None:
        """The most a user turn grew the prompt over the window (None before
        `AHEAD_MIN_TURNS` turns were measured): what the next turn may add, for compacting ahead
        of it. The largest, not the mean: a turn under it that still crosses the threshold
        compacts inside its request as before, one over it was already seen."""
        per_turn: dict[int | None, int] = {}
        for grown, turn in self.growth:
            per_turn[turn] = per_turn.get(turn, 0) + grown
        if len(per_turn) < AHEAD_MIN_TURNS:
            return None
        return max(per_turn.values())

    def progress_after(self, tokens: int, target: int, price_ratio: float) -> float:
        """`progress` once one more request of at least `tokens` is noted: the next request
        re-sends the prompt as it is now plus the user's message, so this is a lower bound
        (0 tokens: `progress` as it is)."""
        floor = max(self.floor, target)
        excess = self.excess + max(0, tokens - floor)
        return excess / (price_ratio * floor) if floor > 0 else 0.0

    def slow(self, threshold: int = SLOW_GROWTH_TOKENS) -> bool:
        """Whether the session grows slowly enough for the economic trigger (see the module's
        docstring): a full window of requests measured, their growth per turn under `threshold`."""
        per_turn = self.growth_per_turn()
        return per_turn is not None and per_turn < threshold

    def progress(self, target: int, price_ratio: float) -> float:
        """How far to the next economic event, 0..1 and beyond (1 = due): the background summary
        step prepares the chunk the event will remove once this is well on the way."""
        return self.progress_after(0, target, price_ratio)

    def reset(self, after: int) -> None:
        """An event ran (whatever triggered it): measure from what it left. The growth across the
        event is not sampled: `after` is counted without the ladder's usage calibration, so the
        difference to the next request would mix the two scales."""
        self.floor = after
        self.excess = 0
        self.last = None
