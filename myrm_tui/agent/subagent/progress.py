"""The child's work as live lines on the task tool's output stream, for the TUI's nested block.

Why lines on the ordinary tool-output stream rather than a new event type: the tool runner
already forwards a running tool's output live, and an interrupted or replayed turn keeps working
unchanged; one formatter and one parser here keep the two ends from drifting apart.
"""

from __future__ import annotations

from dataclasses import dataclass

# Starts every progress line: text a child tool prints can never begin with it by accident,
# because the child's own tool output is not forwarded (only these lines are).
MARK = "⟫sub "
KINDS = ("session", "step", "call", "result", "end")
# Longest detail kept on one line (a command, a path): the block is a summary, not a log.
MAX_DETAIL_CHARS = 160


@dataclass(frozen=True)
class Progress:
    kind: str  # session (child session id), step (model call n), call (a tool call), result, end
    text: str


def progress_line(kind: str, text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > MAX_DETAIL_CHARS:
        flat = flat[: MAX_DETAIL_CHARS - 1] + "…"
    return f"{MARK}{kind} {flat}\n"


def parse_progress(text: str) -> list[Progress]:
    """Every progress line in `text` (chunks may split lines: pass the accumulated output)."""
    found = []
    for line in text.splitlines():
        if not line.startswith(MARK):
            continue
        kind, _, rest = line[len(MARK) :].partition(" ")
        if kind in KINDS:
            found.append(Progress(kind, rest))
    return found
