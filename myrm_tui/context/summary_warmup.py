"""Work a compaction event needs, done a few rows a turn before the event.

Why: an event masks and summarizes the forty-odd rows it removes. Each tool output's one-off
facts (`filters.notable`: a regex per line) are read twice (mask stub, summary findings), and a
leaf redacts every message it quotes (`summary.quotes`: forty patterns a message). Done at event
time that was half the event's CPU, and an event turn is the slow turn of a session (B1's
p95/p99 in docs/benchmarks.md). Both answers depend only on the message text and both are
remembered (`notable._memo`, `quotes.finished_text`), so doing each row once on an ordinary
turn, soon after it arrives, makes the event's calls memo hits: the same answers, so no prompt
byte changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from myrm_tui.context.filters.notable import notable_lines
from myrm_tui.context.intent import _text_of
from myrm_tui.context.summary.quotes import warm_quotes
from myrm_tui.store.records import MessageRecord

# Rows done per ordinary turn at most: a coding turn adds three to six, so eight keeps up (a
# burst of parallel calls is caught up over the next turns) and bounds what one turn pays (a
# scan or a redaction each, about a millisecond in all).
ROWS_PER_TURN = 8


class ScanWarmup:
    """Walks the history's rows once, in order: tool outputs scanned, quotable messages finished."""

    def __init__(self, per_turn: int = ROWS_PER_TURN) -> None:
        self.per_turn = per_turn
        self._next = 0  # index of the first row not looked at yet

    def step(self, rows: Sequence[MessageRecord]) -> int:
        """Do up to `per_turn` rows after the last one done; returns how many."""
        if self._next > len(rows):  # the history was reloaded shorter: start over
            self._next = 0
        done = 0
        while self._next < len(rows) and done < self.per_turn:
            row = rows[self._next]
            self._next += 1
            if row.role == "tool":
                notable_lines(_text_of(row.message), 1)
            elif row.role in ("user", "assistant"):
                warm_quotes([row.message], [row.id])
            else:
                continue
            done += 1
        return done
