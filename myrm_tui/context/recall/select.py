"""Choosing which part of a long recalled text to show (pure text functions, no store).

`ctx_expand` can only ever return a bounded slice of an original, so this module decides the
slice: a line range, or the lines matching a query with some context, always cut at
`max_chars`, and always saying where to continue, so nothing is unreachable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Lines of context shown before and after each line matching a query: enough to see the call
# or heading an error line belongs to, few enough that ten matches still fit the cap.
QUERY_CONTEXT_LINES = 3
# A line longer than this is shown as a window around the match (minified JSON, one-line logs):
# one 1 MB line must not eat the whole expansion.
LONG_LINE_CHARS = 1_000
# Characters shown on each side of a match inside a long line.
LONG_LINE_WINDOW = 400
# A cap below this cannot show a useful slice of anything.
MIN_MAX_CHARS = 200


class SelectionError(ValueError):
    """Bad `lines` argument; the message is written for the model."""


@dataclass(frozen=True)
class Excerpt:
    body: str
    first_line: int  # 1-based, first line (partly) shown; 0 when nothing was shown
    last_line: int  # last line (partly) shown
    total_lines: int
    complete: bool  # the body holds every selected line in full
    next_lines: str | None  # "N:M" that continues where the body stopped, if anything is left
    matched_lines: int = 0  # query mode: how many lines matched
    match_mode: str = ""  # query mode: "literal", "all words" or "any word"


def split_lines(text: str) -> list[str]:
    """Lines as `sed` counts them: a final newline does not start an extra empty line."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def parse_line_range(spec: str | None, total: int) -> tuple[int, int]:
    """`"200:400"`, `"200:"`, `":50"`, `"7"` (also with "-") → 1-based inclusive (start, end),
    clamped to the text; `None` is everything."""
    if spec is None or not str(spec).strip():
        return 1, max(total, 1)
    text = str(spec).strip().replace(" ", "")
    match = re.fullmatch(r"(\d*)([:-]?)(\d*)", text)
    if match is None or (not match.group(1) and not match.group(3)):
        raise SelectionError(
            f'lines={spec!r} is not a line range; use "200:400", "200:" or ":50" (1-based, inclusive).'
        )
    first, sep, last = match.groups()
    start = int(first) if first else 1
    end = int(last) if last else (total if sep else start)
    if start < 1 or end < start:
        raise SelectionError(f"lines={spec!r} is empty or starts before line 1; use start <= end, both from 1.")
    if start > max(total, 1):
        raise SelectionError(f"lines={spec!r} starts after the last line ({total}); pick a range within 1:{total}.")
    return start, min(end, max(total, 1))


def excerpt_range(lines: list[str], start: int, end: int, max_chars: int) -> Excerpt:
    """Lines start..end verbatim, stopping at a line boundary before `max_chars`."""
    max_chars = max(MIN_MAX_CHARS, max_chars)
    total = len(lines)
    out: list[str] = []
    used = 0
    last = start - 1
    cut_line = False
    for number in range(start, end + 1):
        line = lines[number - 1]
        cost = len(line) + 1
        if used + cost > max_chars:
            if not out:
                # A single line bigger than the cap: show its head, say so.
                room = max_chars - 80
                out.append(
                    line[:room] + f" …[line {number} continues: {len(line):,} chars in all; "
                    "use query= to find text inside it]"
                )
                last = number
                cut_line = True
            break
        out.append(line)
        used += cost
        last = number
    complete = last >= end and not cut_line
    # The rest of the requested range: the next call caps again and hints again, so a chain of
    # hints walks to the end.
    next_lines = f"{last + 1}:{end}" if last < end else None
    return Excerpt(
        body="\n".join(out),
        first_line=start,
        last_line=last,
        total_lines=total,
        complete=complete,
        next_lines=next_lines,
    )


def matching_lines(lines: list[str], start: int, end: int, query: str) -> tuple[list[int], str]:
    """Line numbers matching: the literal text (case-insensitive), else lines holding every word
    of the query, else any word."""
    needle = query.casefold().strip()
    numbers = range(start, end + 1)
    if needle:
        hits = [n for n in numbers if needle in lines[n - 1].casefold()]
        if hits:
            return hits, "literal"
    words = [w.casefold() for w in re.findall(r"\w+", query)]
    if not words:
        return [], ""
    folded = {n: lines[n - 1].casefold() for n in numbers}
    every = [n for n in numbers if all(w in folded[n] for w in words)]
    if every:
        return every, "all words"
    some = [n for n in numbers if any(w in folded[n] for w in words)]
    return some, ("any word" if some else "")


def window_around(line: str, query: str, width: int) -> str:
    """`line`, or the `width` characters of it around the first match of `query` (the literal
    text, else its first word found), with … where it is cut."""
    if len(line) <= width:
        return line
    folded = line.casefold()
    needles = [query.casefold().strip()] + [w.casefold() for w in re.findall(r"\w+", query)]
    found = next((p for p in (folded.find(n) for n in needles if n) if p >= 0), 0)
    left = max(0, min(found - width // 2, len(line) - width))
    right = left + width
    return ("…" if left else "") + line[left:right] + ("…" if right < len(line) else "")


def _show_line(line: str, number: int, width: int, query: str, matched: bool) -> str:
    prefix = f"{number:>{width}}: "
    if len(line) <= LONG_LINE_CHARS:
        return prefix + line
    if matched:
        folded = line.casefold()
        needles = [query.casefold().strip()] + [w.casefold() for w in re.findall(r"\w+", query)]
        # The literal query first; a single word only when the literal is absent.
        found = next((p for p in (folded.find(n) for n in needles if n) if p >= 0), 0)
        left = max(0, found - LONG_LINE_WINDOW)
        right = min(len(line), found + LONG_LINE_WINDOW)
        return (
            f"{prefix}[long line, {len(line):,} chars; chars {left + 1}-{right}:] "
            f"{'…' if left else ''}{line[left:right]}{'…' if right < len(line) else ''}"
        )
    return f"{prefix}{line[:LONG_LINE_CHARS]}… [{len(line):,} chars]"


def excerpt_matches(lines: list[str], start: int, end: int, query: str, max_chars: int) -> Excerpt | None:
    """Numbered lines matching `query` within start..end, with context; None if nothing matches."""
    max_chars = max(MIN_MAX_CHARS, max_chars)
    hits, mode = matching_lines(lines, start, end, query)
    if not hits:
        return None
    # Merge the context windows of nearby matches into groups of consecutive lines.
    groups: list[list[int]] = []
    for n in hits:
        lo, hi = max(start, n - QUERY_CONTEXT_LINES), min(end, n + QUERY_CONTEXT_LINES)
        if groups and lo <= groups[-1][1] + 1:
            groups[-1][1] = max(groups[-1][1], hi)
        else:
            groups.append([lo, hi])
    hit_set = set(hits)
    width = len(str(end))
    out: list[str] = []
    used = 0
    first = last = 0
    stopped_at: int | None = None
    for lo, hi in groups:
        if out:
            out.append("…")
            used += 2
        for number in range(lo, hi + 1):
            shown = _show_line(lines[number - 1], number, width, query, number in hit_set)
            if used + len(shown) + 1 > max_chars and last:  # at least one line is always shown
                stopped_at = number
                break
            out.append(shown)
            used += len(shown) + 1
            first = first or number
            last = number
        if stopped_at is not None:
            break
    if out and out[-1] == "…":
        out.pop()
    next_lines = f"{stopped_at}:{end}" if stopped_at is not None else None
    return Excerpt(
        body="\n".join(out),
        first_line=first,
        last_line=last,
        total_lines=len(lines),
        complete=stopped_at is None,
        next_lines=next_lines,
        matched_lines=len(hits),
        match_mode=mode,
    )
