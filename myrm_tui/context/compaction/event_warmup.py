"""Idle-time work that makes the next compaction event cheap without changing what it writes.

Why: an event stands summaries in for the ~40 outputs it removes, and the extractive body of
each (the lines later messages name, what a re-run changed, the notable lines of every output,
their redaction, the verbatim quotes) was most of its time: 50-100 ms of CPU inside the request
that crossed the threshold, while the user waits (benchmark B1, docs/benchmarks.md). Every piece
of that work is remembered by what it reads (a row's id and text, a line's text), so doing it
once while the user reads the last answer leaves the event only the assembly. Nothing is stored
and no prompt byte changes: the event still decides and writes everything itself, and a row whose
facts changed since (a later message names one of its lines) is simply worked out again.

The rows warmed are the dry run of an emergency now (`ContextEngine.rows_removed_next`), only
once the next removal is near (the same gate as the background summaries), and each row once.
The work runs in a worker thread (the dry run alone is 15-100 ms of CPU: on the UI's event loop
it would hold a key that long) and one unit at a time under the engine's lock: a new turn's
assemble waits for one unit at most, and cancelling the idle step stops the thread at the next
unit.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from myrm_tui.context.compaction.compactor import Compactor
from myrm_tui.context.compaction.prepared_summaries import ECONOMIC_PREPARE_AT
from myrm_tui.context.compaction.summary_area import SummaryArea
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.rows.units import split_units
from myrm_tui.context.window.budget import Budget
from myrm_tui.context.window.turn_input import TurnInput


class EventWarmup:
    """The rows already warmed (by id) and the idle step that warms the next ones."""

    def __init__(
        self,
        history: RenderedHistory,
        summaries: SummaryArea,
        compactor: Compactor,
        lock: AbstractContextManager[Any],
        removed_next: Callable[..., list[int]],
        ready: Callable[[TurnInput], Budget],
    ) -> None:
        self.history = history
        self.summaries = summaries
        self.compactor = compactor
        self._lock = lock
        self._removed_next = removed_next  # the engine's `rows_removed_next`
        self._ready = ready  # rows synced and rendered, as the next assemble starts
        self._warmed: set[int] = set()

    def pieces(self, inp: TurnInput) -> tuple[Budget, list[list[int]]]:
        """What the next removal is likely to take and no idle step warmed yet, cut into units
        (a tool result is only understood beside the call that asked for it); nothing unless a
        removal is near."""
        with self._lock:
            budget = self._ready(inp)
            near = self.compactor.economic_progress(budget) >= ECONOMIC_PREPARE_AT
            tokens = inp.fixed_tokens() + self.history.tokens
            if tokens < budget.prompt_limit * self.history.config.full_ratio and not near:
                return budget, []
            removed = set(self._removed_next(inp, if_emergency_now=True, economic=near))
            if not removed:
                return budget, []
            rows = self.history.rows
            # Rows a prepared summary stands for need no extractive body (read once per step).
            for start, end in self.summaries.prepared_blocks().items():
                removed.difference_update(range(start, end))
            if not removed:
                return budget, []
            out: list[list[int]] = []
            for unit in split_units(rows, min(removed)):
                piece = [i for i in range(unit.start, unit.end) if i in removed and rows[i].id not in self._warmed]
                if piece:
                    out.append(piece)
            return budget, out

    async def warm(self, inp: TurnInput) -> int:
        """Warm what the next removal will take, in a worker thread; returns the rows warmed.
        Cancelled (a new turn), the thread stops before its next unit."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(self.warm_now, inp, stop)
        except asyncio.CancelledError:
            stop.set()
            raise

    def warm_now(self, inp: TurnInput, stop: threading.Event | None = None) -> int:
        """`warm`'s work, in the calling thread (one unit per hold of the lock)."""
        budget, pieces = self.pieces(inp)
        done = 0
        for piece in pieces:
            if stop is not None and stop.is_set():
                break
            with self._lock:
                self.summaries.warm(piece, inp.model.name, budget)
                self._warmed.update(self.history.rows[i].id for i in piece)
            done += len(piece)
        return done

    def warmed(self) -> Sequence[int]:
        """The ids of the rows warmed so far (tests, figures)."""
        return sorted(self._warmed)
