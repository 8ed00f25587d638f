"""The map's progress as lines on the tool's live output stream (the TUI's tool block, and
`myrm run`'s stderr, which picks them out by their mark)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Starts every progress line, so `myrm run` can tell them from other live tool output.
MARK = "⟫map "
# How many progress lines a whole map prints at most (plus the first and the last): enough to
# see it move, few enough not to flood a terminal or a CI log on a map of thousands.
STEPS = 20


@dataclass
class Tally:
    total: int
    done: int = 0  # finished this run or earlier (resumed), ok or failed
    failed: int = 0
    resumed: int = 0
    tokens: int = 0
    cost: float = 0.0

    def line(self, kind: str, note: str = "") -> str:
        cost = f" · ${self.cost:.4f}" if self.cost else ""
        resumed = f" ({self.resumed} from an earlier run)" if self.resumed else ""
        tail = f" · {note}" if note else ""
        return (
            f"{MARK}{kind}: {self.done} of {self.total}{resumed} · {self.failed} failed · "
            f"{self.tokens:,} tokens{cost}{tail}\n"
        )

    def due(self) -> bool:
        """Print after this item? Every 1/STEPS of the map, and the last one."""
        step = max(1, self.total // STEPS)
        return self.done == self.total or self.done % step == 0


def is_progress(line: str) -> bool:
    return line.startswith(MARK)


# `Tally.line` read back, for a reader that wants the figures rather than the sentence (`myrm run
# --output-format stream-json`'s map_progress lines); kept beside the writer so the two change together.
_LINE = re.compile(
    re.escape(MARK) + r"(?P<kind>\w+): (?P<done>\d+) of (?P<total>\d+)(?: \((?P<resumed>\d+) from an earlier run\))? · "
    r"(?P<failed>\d+) failed · (?P<tokens>[\d,]+) tokens(?: · \$(?P<cost>\d+\.\d+))?(?: · (?P<note>.*))?$"
)


@dataclass(frozen=True)
class Progress:
    """One progress line's figures (cost to the line's four decimals)."""

    kind: str
    done: int
    total: int
    failed: int
    resumed: int
    tokens: int
    cost: float
    note: str


def read_progress(line: str) -> Progress | None:
    """The figures of a progress line, or None for any other line of live output."""
    found = _LINE.match(line.rstrip("\n"))
    if found is None:
        return None
    return Progress(
        kind=found["kind"],
        done=int(found["done"]),
        total=int(found["total"]),
        failed=int(found["failed"]),
        resumed=int(found["resumed"] or 0),
        tokens=int(found["tokens"].replace(",", "")),
        cost=float(found["cost"] or 0.0),
        note=found["note"] or "",
    )
