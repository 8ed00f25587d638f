"""Excerpts: ordered lines with a keep-priority, and the one routine that fits them to a budget.

Why a shared representation: every filter (shell compressor, structural trimmer, generic)
only decides *which* input lines matter and how much; `fit` then enforces the budget the same
way everywhere — drop the lowest tier first, prefer lines near the head and tail (or an
explicit rank), collapse every dropped run into one `… N lines omitted …` marker. So the hard
guarantees (fits the budget, real lines only, at least one real line) live in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from myrm_tui.context.filters import constants as C
from myrm_tui.context.filters.markers import cut_line, marker, omitted


class Tier(IntEnum):
    """How much a line matters; `fit` drops the lowest tier first."""

    BULK = 0  # ordinary lines: kept only if the budget allows, head and tail first
    CONTEXT = 1  # lines around what matters (diff changes, traceback frames)
    STRUCTURE = 2  # headers that orient the reader (file names, section titles, hunk headers)
    IMPORTANT = 3  # errors, failures, summaries: the reason the output was worth reading
    PINNED = 4  # a few first/last lines of the generic filter: what ran and how it ended


@dataclass(slots=True)
class Piece:
    text: str
    tier: int
    # For markers: how many input lines this marker stands for (0 = an informational marker).
    omits: int = 0
    is_marker: bool = False
    # Explicit keep order inside a tier (lower first); None = by distance to head/tail.
    rank: float | None = None
    # 0-based input line range this piece shows or stands for (-1 = unknown); gap markers
    # quote it so the reader knows which lines to recall.
    first: int = -1
    last: int = -1
    # Counted in `important_lines` (errors, failures, summaries).
    key: bool = False


@dataclass(slots=True)
class Excerpt:
    kind: str
    pieces: list[Piece] = field(default_factory=list)

    def keep(
        self, text: str, tier: int = Tier.BULK, rank: float | None = None, line: int = -1, key: bool | None = None
    ) -> None:
        key = tier == Tier.IMPORTANT if key is None else key
        self.pieces.append(Piece(text, int(tier), rank=rank, first=line, last=line, key=key))

    def note(
        self, what: str, tier: int = Tier.STRUCTURE, omits: int = 0, indent: str = "", rank: float | None = None
    ) -> None:
        """An informational marker line written by the filter (counts, summaries of dropped spam)."""
        self.pieces.append(Piece(marker(what, indent), int(tier), omits=omits, is_marker=True, rank=rank))

    def skipped(self, count: int, what: str = "", tier: int = Tier.CONTEXT, first: int = -1, last: int = -1) -> None:
        if count > 0:
            text = omitted(count, detail=what, first=first, last=last)
            self.pieces.append(Piece(text, int(tier), omits=count, is_marker=True, first=first, last=last))

    def chars(self) -> int:
        return sum(len(p.text) + 1 for p in self.pieces)

    @property
    def real_pieces(self) -> int:
        return sum(1 for p in self.pieces if not p.is_marker)


class Dropper:
    """Collects consecutive dropped input lines (by category) and flushes them as one marker
    when a kept line arrives, e.g. `… 37 lines omitted (Collecting ×12, Downloading ×25) …`,
    so a compressor can decide line by line and still say what it removed."""

    def __init__(self, excerpt: Excerpt, tier: int = Tier.CONTEXT) -> None:
        self.excerpt = excerpt
        self.tier = tier
        self.pending: dict[str, int] = {}
        self.count = 0
        self.first = -1
        self.last = -1
        self.totals: dict[str, int] = {}

    def drop(self, line: int, category: str = "") -> None:
        if self.count == 0:
            self.first = line
        self.last = line
        self.count += 1
        self.pending[category] = self.pending.get(category, 0) + 1
        self.totals[category] = self.totals.get(category, 0) + 1

    def keep(self, text: str, tier: int, line: int, rank: float | None = None) -> None:
        self.flush()
        self.excerpt.keep(text, tier, rank=rank, line=line)

    def flush(self) -> None:
        if self.count:
            self.excerpt.skipped(self.count, describe(self.pending), self.tier, self.first, self.last)
        self.pending = {}
        self.count = 0


def describe(categories: dict[str, int], limit: int = 4) -> str:
    """`Collecting ×12, progress ×25` for the named categories (unnamed ones are not listed)."""
    named = sorted(((n, c) for c, n in categories.items() if c), reverse=True)[:limit]
    return ", ".join(f"{c} ×{n:,}" for n, c in named)


@dataclass(frozen=True, slots=True)
class Fitted:
    text: str
    shown_lines: int
    important_lines: int


def line_cap(budget: int, real_lines: int) -> int:
    """Widest a single line may be: a share of the budget, or nearly all of it for blobs."""
    reserve = len(omitted(10**9, first=10**9, last=10**9 + 1)) + 2
    if real_lines <= C.FEW_LINES:
        return max(1, budget - reserve)
    return max(1, min(budget - reserve, max(C.MIN_LINE_CAP, budget // C.LINE_CAP_BUDGET_SHARE)))


def fit(excerpt: Excerpt, budget: int, total_lines: int) -> Fitted:
    """Render the excerpt within `budget` characters (hard guarantee)."""
    pieces = excerpt.pieces
    n = len(pieces)
    cap = line_cap(budget, excerpt.real_pieces)
    texts = [p.text if p.is_marker else cut_line(p.text, cap) for p in pieces]
    # Upper bound of one gap marker (plus its newline): the count can never exceed all lines.
    big = max(total_lines, sum(p.omits for p in pieces), n) + 1
    gap_cost = len(omitted(big, first=big, last=big + 1)) + 1

    def position(i: int) -> float:
        rank = pieces[i].rank
        if rank is not None:
            return rank
        return min(i / C.HEAD_WEIGHT, (n - 1 - i) / C.TAIL_WEIGHT)

    order = sorted(range(n), key=lambda i: (-pieces[i].tier, position(i), i))
    kept = bytearray(n + 2)  # index shifted by one; kept[0] and kept[n+1] are sentinels
    kept[0] = kept[n + 1] = 1
    total = gap_cost if n else 0
    bulk_full = False
    for i in order:
        if pieces[i].tier == Tier.BULK and bulk_full:
            continue
        left, right = kept[i], kept[i + 2]
        gaps = -1 if (left and right) else (1 if not (left or right) else 0)
        cost = len(texts[i]) + 1 + gaps * gap_cost
        if total + cost <= budget + 1:  # +1: the last line has no trailing newline
            kept[i + 1] = 1
            total += cost
        elif pieces[i].tier == Tier.BULK:
            bulk_full = True  # keep head and tail contiguous rather than scatter short lines
    return _render(pieces, texts, kept, budget)


def _render(pieces: list[Piece], texts: list[str], kept: bytearray, budget: int) -> Fitted:
    out: list[str] = []
    shown = important = 0
    gap = 0
    lo = hi = -1

    gap_start = 0

    def close_gap(end: int) -> None:
        nonlocal shown, important
        if not gap:
            return
        note = omitted(gap, first=lo, last=hi)
        run = range(gap_start, end)
        # A gap of a few short real lines costs less shown than summarised: show it.
        if all(not pieces[j].is_marker for j in run) and sum(len(texts[j]) + 1 for j in run) <= len(note) + 1:
            for j in run:
                out.append(texts[j])
                shown += 1
                important += pieces[j].key
        else:
            out.append(note)

    for i, piece in enumerate(pieces):
        if kept[i + 1] and piece.is_marker and piece.omits and (gap or not kept[i + 2]):
            kept[i + 1] = 0  # an omission marker next to a gap folds into one marker
        if kept[i + 1]:
            close_gap(i)
            gap, lo, hi = 0, -1, -1
            gap_start = i + 1
            out.append(texts[i])
            if not piece.is_marker:
                shown += 1
                if piece.key:
                    important += 1
        else:
            gap += piece.omits if piece.is_marker else 1
            if piece.first >= 0:
                lo = piece.first if lo < 0 else min(lo, piece.first)
                hi = max(hi, piece.last)
    close_gap(len(pieces))
    if shown == 0:
        # Nothing real fit next to the markers: show the best real line alone, cut to size.
        best = next(
            (i for i in sorted(range(len(pieces)), key=lambda i: -pieces[i].tier) if not pieces[i].is_marker), None
        )
        if best is None:
            return Fitted("", 0, 0)
        text = cut_line(pieces[best].text, budget)
        return Fitted(text, 1, int(pieces[best].key))
    text = "\n".join(out)
    while len(text) > budget and len(out) > 1:  # defensive: the cost model is an upper bound
        out.pop()
        text = "\n".join(out)
    return Fitted(text, shown, important)
