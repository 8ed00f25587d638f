"""The map's progress as lines on the tool's live output stream (the TUI's tool block, and
`myrm run`'s stderr, which picks them out by their mark)."""

from __future__ import annotations

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
