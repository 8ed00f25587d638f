"""Which lines of an old tool output are worth keeping when the output leaves the prompt.

Why beyond the output's own shape (`filters/notable.py`): two signals say a line matters that
no scan of the output alone can see, and neither depends on how the fact is written.

- **The conversation names it later.** A user who asks "did you see the `lease_ttl` entry?",
  an assistant that notes "worth remembering: the `relay-quorum-shim` row": an identifier a later
  user or assistant message names, found in an older output, marks the line that holds it. A
  model does not search for a fact it does not know it lost; it does refer back to what it
  discussed.
- **A run of the same call changed it.** A file read again, a command run again: the lines one
  run has and the other has not are the news (the setting someone edited, the warning the newer
  run no longer prints). A superseded output keeps what its newer run lost; a re-read keeps what
  it changed. Only when few lines differ: two unrelated outputs of one command are not a change.

`FactContext` is built from the stored rows at a compaction event, so what it picks is a pure
function of the store (the views and summary nodes it feeds are decided once and stored).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from myrm_tui.context.filters.notable import LINE_CHARS
from myrm_tui.context.observations.fact_index import (
    MEMO_TEXT_CHARS,
    FactIndex,
    _call_key_of_raw,
    _names,
)
from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.store.records import MessageRecord

# A message id → the lines of its output a summary lists first (`kept_lines`).
KeptLines = Callable[[int], Sequence[str]]

# A name found on more lines of an output than this is what the output is about (a module name
# in its own source, a package in a listing), not a line to single out.
MAX_NAMED_LINES = 2
# Two runs of one call whose lines differ on more than this many lines are two different
# outputs, not one changed: nothing is singled out.
MAX_CHANGED_LINES = 6
# A leading timestamp differs on every run of a logging command; it is no change.
_TIMESTAMP = re.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|[+-]\d{2}:?\d{2})?\]?\s*")
# The part of an output compared or searched: the notable scan's bound, for the same reason.
SCAN_CHARS = 2_000_000
# A compaction event may compare outputs no engine index holds (a FactContext without one scans
# its rows); this memo remembers the normalized line sets by content (no session state). Entries:
# the live history of a 200k window holds a few hundred outputs; only texts up to
# fact_index.MEMO_TEXT_CHARS are remembered.
LINES_MEMO_ENTRIES = 512


def _norm(line: str) -> str:
    return " ".join(_TIMESTAMP.sub("", line).split())


def _scan_normalized(text: str) -> tuple[frozenset[str], frozenset[str]]:
    lines = text.split("\n")
    return frozenset(lines), frozenset(_norm(line) for line in lines)


_normalized_memo = lru_cache(maxsize=LINES_MEMO_ENTRIES)(_scan_normalized)


def _normalized(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Every line of `text` as it is, and timestamps aside and spaces collapsed (what
    `changed_lines` compares; a line found as it is needs no normalizing)."""
    return _normalized_memo(text) if len(text) <= MEMO_TEXT_CHARS else _scan_normalized(text)


def clear_memos() -> None:
    """Forget every remembered scan (tests start from empty memos)."""
    _names.cache_clear()
    _normalized_memo.cache_clear()
    _call_key_of_raw.cache_clear()


def _records(text: str) -> list[str] | None:
    """A one-line JSON array's objects, each as compact text (None for anything else)."""
    stripped = text.strip()
    if "\n" in stripped or not stripped.startswith("[{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    return [json.dumps(v, ensure_ascii=False) for v in value]


def changed_lines(text: str, other: str) -> list[str]:
    """The lines of `text` that `other` lacks (timestamps aside), in order; [] when the two
    differ on more than MAX_CHANGED_LINES lines (not one output changed, two outputs). A one-line
    JSON array is compared record by record."""
    text, other = text[:SCAN_CHARS], other[:SCAN_CHARS]
    mine, theirs = _records(text), _records(other)
    if mine is not None and theirs is not None:
        seen = set(theirs)
        out = [r for r in mine if r not in seen]
    else:
        raw, normalized = _normalized(other)
        out = [line for line in text.split("\n") if line.strip() and line not in raw and _norm(line) not in normalized]
    return out if len(out) <= MAX_CHANGED_LINES else []


def named_lines(text: str, named: set[str]) -> list[str]:
    """The lines of `text` holding a name of `named` that occurs on at most MAX_NAMED_LINES of
    them, in order."""
    if not named:
        return []
    text = text[:SCAN_CHARS]
    lowered = text.lower()
    return _lines_naming(text, [name for name in named if name in lowered])


def _lines_naming(text: str, present: Iterable[str]) -> list[str]:
    """The lines of `text` holding a name of `present` (names `text` contains) that occurs on at
    most MAX_NAMED_LINES of them, in order. Each line is lowercased once, not once per name."""
    present = list(present)
    if not present:
        return []
    lines = text.split("\n")
    lowered = [line.lower() for line in lines]
    out: dict[int, None] = {}
    for name in present:
        hits = [i for i, line in enumerate(lowered) if name in line]
        if len(hits) <= MAX_NAMED_LINES:
            out.update(dict.fromkeys(hits))
    return [lines[i] for i in sorted(out)]


def _cut(line: str) -> str:
    flat = " ".join(line.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"


class FactContext:
    """The named identifiers and the runs of each call in `rows` from `start` on (one compaction
    event's view), read from `index`: the engine's history passes its own (`fact_index.py`), so
    each row is scanned once per session; without one, a private index scans `rows` here."""

    def __init__(self, rows: Sequence[MessageRecord], start: int = 0, index: FactIndex | None = None) -> None:
        self.rows = rows
        self.start = start
        self.index = index if index is not None else FactIndex()
        self._built = False

    def _build(self) -> FactIndex:
        if not self._built:
            self.index.catch_up(self.rows)
            self._built = True
        return self.index

    def named_after(self, i: int) -> set[str]:
        """The identifiers a user or assistant message after row `i` names."""
        floor = max(i + 1, self.start)
        return {name for name, last in self._build().last_named.items() if last >= floor}

    def neighbours(self, i: int) -> tuple[int | None, int | None]:
        """The previous and the next run of row `i`'s call (same tool, same arguments)."""
        table = self._build().table(self.start)
        key = table.identity.get(i)
        if key is None:
            return None, None
        runs = table.runs[key]
        at = bisect.bisect_left(runs, i)
        return (runs[at - 1] if at else None), (runs[at + 1] if at + 1 < len(runs) else None)

    def _named_lines(self, i: int, content: str) -> list[str]:
        """`named_lines(content, self.named_after(i))`, from the names row `i`'s output holds
        (checked once per name and row) and the lines found for the same names before."""
        index, row_id = self._build(), self.rows[i].id
        text = content[:SCAN_CHARS]
        floor = max(i + 1, self.start)
        last = index.last_named
        present = frozenset(name for name in index.names_present(row_id, text) if last[name] >= floor)
        memo = index.named.get(row_id)
        if memo is not None and memo[0] == present:
            return list(memo[1])
        found = _lines_naming(text, present)
        index.named[row_id] = (present, found)
        return list(found)

    def _changed(self, i: int, content: str, other: int) -> list[str]:
        """`changed_lines` of row `i`'s output against row `other`'s (stored rows never change,
        so one answer per pair)."""
        index = self._build()
        key = (self.rows[i].id, self.rows[other].id)
        found = index.changed.get(key)
        if found is None:
            found = index.changed[key] = changed_lines(content, compaction_text(self.rows[other].message))
        return list(found)

    def kept(self, i: int, content: str) -> list[str]:
        """Lines of row `i`'s output (`content`) to keep, best first, each flattened and cut:
        those a later message names, then what its previous run lacked (a re-read's change),
        then what its next run no longer has (a superseded run's news)."""
        out: list[str] = self._named_lines(i, content)
        before, after = self.neighbours(i)
        for other in (before, after):
            if other is not None:
                out += self._changed(i, content, other)
        return [_cut(line) for line in dict.fromkeys(out) if line.strip()]

    def named(self, i: int, content: str) -> list[str]:
        """Only the lines of row `i`'s output that a later message names (an ephemeral output's
        stub: a stale listing keeps nothing else)."""
        return [_cut(line) for line in self._named_lines(i, content) if line.strip()]

    def lost(self, i: int, content: str) -> list[str]:
        """What a superseded row `i` keeps: the lines a later message names, then those its next
        run no longer has."""
        out: list[str] = self._named_lines(i, content)
        _, after = self.neighbours(i)
        if after is not None:
            out += self._changed(i, content, after)
        return [_cut(line) for line in dict.fromkeys(out) if line.strip()]


def kept_lines(context: FactContext, indices: Iterable[int]) -> KeptLines:
    """`FactContext.kept` of the tool rows of `indices`, by message id (empty for any other id),
    worked out when first asked: a leaf lists the findings of its newest outputs only, so most
    rows of a long run are never asked about (working them all out, with the findings they lead,
    was a fifth of an event)."""
    by_id = {context.rows[i].id: i for i in indices}
    memo: dict[int, list[str]] = {}

    def lines(message_id: int) -> list[str]:
        found = memo.get(message_id)
        if found is None:
            i = by_id.get(message_id)
            found = []
            if i is not None and context.rows[i].role == "tool":
                found = context.kept(i, compaction_text(context.rows[i].message))
            memo[message_id] = found
        return found

    return lines
