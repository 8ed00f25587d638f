"""Which messages the next leaf summary covers.

Rules, and why:
- the oldest messages first: a summary replaces history the model needs least;
- never inside the fresh tail (the model's working memory) nor the human anchor (the user's
  original instruction must stay verbatim, invariant 6);
- whole units only: an assistant message with tool calls goes with all its results, and a
  chunk never starts on a tool result (providers reject a half pair, and a summary of half a
  pair misreports what happened);
- capped so chunk + prompt overhead + target output fits the window of the model that will
  actually summarize (an 8k auxiliary model under a 200k main model must not be fed 100k).
  A single unit larger than that cap returns None: the caller must route to a bigger model
  (`client.pick_summarizer_model`) rather than cut a message in half.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# Prompt overhead when the caller does not measure it: the instructions + JSON schema + framing.
DEFAULT_OVERHEAD_TOKENS = 2_048
# What a leaf summary is asked to be at most; the output reserve of the summarizer call.
DEFAULT_TARGET_TOKENS = 1_200
# Never feed more than this to one leaf call even if the summarizer's window allows it: a summary
# of 200k tokens in ~1k tokens loses too much, and one failed call should not waste a huge input.
MAX_LEAF_CHUNK_TOKENS = 20_000


class Row(Protocol):
    """What chunking needs of a row (`store.records.MessageRecord` satisfies it). Read-only
    properties, so a frozen record matches."""

    @property
    def message(self) -> dict[str, Any]: ...

    @property
    def tokens(self) -> int: ...


@dataclass(frozen=True)
class Chunk:
    start: int  # row index, inclusive
    end: int  # row index, exclusive
    tokens: int


def unit_end(rows: Sequence[Row], i: int, limit: int) -> int:
    """End (exclusive) of the unit starting at i: an assistant with tool calls takes its results."""
    message = rows[i].message
    j = i + 1
    if message.get("role") == "assistant" and message.get("tool_calls"):
        ids = {c.get("id") for c in message["tool_calls"]}
        while j < len(rows) and rows[j].message.get("role") == "tool" and rows[j].message.get("tool_call_id") in ids:
            j += 1
    return j if j <= limit else limit + 1  # beyond the limit: the unit crosses it


def chunk_cap(
    summarizer_window: int,
    overhead: int = DEFAULT_OVERHEAD_TOKENS,
    target: int = DEFAULT_TARGET_TOKENS,
    max_chunk: int = MAX_LEAF_CHUNK_TOKENS,
) -> int:
    """Most chunk tokens one summarizer call can take."""
    return min(max_chunk, summarizer_window - overhead - target)


def _segments(start: int, tail_start: int, anchor: int | None) -> list[tuple[int, int]]:
    if anchor is None or not start <= anchor < tail_start:
        return [(start, tail_start)]
    return [(start, anchor), (anchor + 1, tail_start)]


def _pick(rows: Sequence[Row], lo: int, hi: int, cap: int) -> Chunk | None:
    while lo < hi and rows[lo].message.get("role") == "tool":
        lo += 1  # an orphan result (its call is in the anchor or an older chunk): never a start
    if lo >= hi:
        return None
    end, total = lo, 0
    while end < hi:
        j = unit_end(rows, end, hi)
        if j > hi:
            break  # the unit reaches into the tail/anchor: stop before it
        size = sum(rows[k].tokens for k in range(end, j))
        if total + size > cap:
            break
        total += size
        end = j
    return Chunk(lo, end, total) if end > lo else None


def choose_chunk(
    rows: Sequence[Row],
    *,
    start: int,
    tail_start: int,
    anchor: int | None,
    summarizer_window: int,
    overhead: int = DEFAULT_OVERHEAD_TOKENS,
    target: int = DEFAULT_TARGET_TOKENS,
    max_chunk: int = MAX_LEAF_CHUNK_TOKENS,
) -> Chunk | None:
    """The oldest pair-safe run in [start, tail_start) minus the anchor that fits the summarizer.

    `start` is the first row not yet covered by a summary; `anchor` the human anchor's row index
    (or None). Returns None when nothing fits (empty range, or the first unit alone is larger
    than the cap: see `first_unit_tokens` to tell the two apart).
    """
    cap = chunk_cap(summarizer_window, overhead, target, max_chunk)
    if cap <= 0:
        return None
    tail_start = min(tail_start, len(rows))
    for lo, hi in _segments(start, tail_start, anchor):
        if lo >= hi:
            continue
        chunk = _pick(rows, lo, hi, cap)
        if chunk is not None:
            return chunk
        if any(rows[k].message.get("role") != "tool" for k in range(lo, hi)):
            return None  # the oldest unit does not fit: do not skip ahead of it (order matters)
    return None


def first_unit_tokens(rows: Sequence[Row], *, start: int, tail_start: int, anchor: int | None) -> int | None:
    """Tokens of the smallest chunk `choose_chunk` could ever return here (its first unit), or
    None when there is nothing to summarize. The auxiliary-model guard compares this with the
    summarizer's window: if even this does not fit, summarize with the main model instead."""
    tail_start = min(tail_start, len(rows))
    for lo, hi in _segments(start, tail_start, anchor):
        while lo < hi and rows[lo].message.get("role") == "tool":
            lo += 1
        if lo >= hi:
            continue
        j = unit_end(rows, lo, hi)
        if j > hi:
            return None
        return sum(rows[k].tokens for k in range(lo, j))
    return None


def chunks_between(
    rows: Sequence[Row],
    *,
    start: int,
    end: int,
    barriers: Collection[int],
    blocks: Mapping[int, int],
    summarizer_window: int,
    overhead: int = DEFAULT_OVERHEAD_TOKENS,
    target: int = DEFAULT_TARGET_TOKENS,
    max_chunk: int = MAX_LEAF_CHUNK_TOKENS,
) -> list[Chunk]:
    """Every chunk, oldest first, that summarizer calls would take to cover [start, end) (the
    compact command, or what an emergency is about to remove). Chunks never cross a barrier (a
    row that is never removed: the anchors) nor a range already prepared (`blocks`, start →
    end), so removal cuts the removed run exactly at their edges. A unit too large for one call
    is skipped: it gets the extractive body."""
    cap = chunk_cap(summarizer_window, overhead, target, max_chunk)
    if cap <= 0:
        return []
    end = min(end, len(rows))
    edges = sorted({*(b for b in barriers if start <= b < end), *(b for b in blocks if start <= b < end)})
    out: list[Chunk] = []
    i = start
    while i < end:
        if i in blocks:
            i = max(i + 1, blocks[i])
            continue
        if i in barriers:
            i += 1
            continue
        hi = next((e for e in edges if e > i), end)
        chunk = _pick(rows, i, hi, cap)
        if chunk is None:
            i = hi if unit_end(rows, i, hi) > hi else max(i + 1, unit_end(rows, i, hi))
            continue
        out.append(chunk)
        i = chunk.end
    return out
