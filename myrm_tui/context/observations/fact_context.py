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

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from myrm_tui.context.filters.notable import LINE_CHARS
from myrm_tui.context.observations.intent import _text_of
from myrm_tui.context.rows.views import parse_arguments
from myrm_tui.store.records import MessageRecord

# Identifiers a message can name: snake_case, kebab-case, dotted or CamelCase names of at least
# MIN_NAME_CHARS characters. Plain words are not names: "the", "config", "retry" occur everywhere.
_NAME = re.compile(r"(?<![\w./-])([A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)")
MIN_NAME_CHARS = 5
# A name found on more lines of an output than this is what the output is about (a module name
# in its own source, a package in a listing), not a line to single out.
MAX_NAMED_LINES = 2
# Two runs of one call whose lines differ on more than this many lines are two different
# outputs, not one changed: nothing is singled out.
MAX_CHANGED_LINES = 6
# Tools whose runs are compared: reading or running the same thing again. Writes are not.
_NOT_COMPARED = frozenset({"file_write", "file_edit"})
# A leading timestamp differs on every run of a logging command; it is no change.
_TIMESTAMP = re.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|[+-]\d{2}:?\d{2})?\]?\s*")
# The part of an output compared or searched: the notable scan's bound, for the same reason.
SCAN_CHARS = 2_000_000
# Every compaction event builds a FactContext over the whole session (twice: removal planning and
# the summaries), so the same messages are scanned again at each event; these memos remember the
# pure per-text results (names, call keys, normalized line sets). Keyed by content, so they hold
# no session state. Entries: the live history of a 200k window is a few hundred messages and a
# few hundred outputs. Only texts up to MEMO_TEXT_CHARS are remembered (a few dozen MB at worst);
# a longer one is scanned each time, as before.
NAMES_MEMO_ENTRIES = 4_096
LINES_MEMO_ENTRIES = 512
MEMO_TEXT_CHARS = 100_000


def names_in(text: str) -> set[str]:
    """The identifiers `text` names, lowercased."""
    return set(_names(text)) if len(text) <= MEMO_TEXT_CHARS else set(_scan_names(text))


def _scan_names(text: str) -> frozenset[str]:
    return frozenset(m.lower() for m in _NAME.findall(text) if len(m) >= MIN_NAME_CHARS)


_names = lru_cache(maxsize=NAMES_MEMO_ENTRIES)(_scan_names)


def _norm(line: str) -> str:
    return " ".join(_TIMESTAMP.sub("", line).split())


def _scan_normalized(text: str) -> frozenset[str]:
    return frozenset(_norm(line) for line in text.split("\n"))


_normalized_memo = lru_cache(maxsize=LINES_MEMO_ENTRIES)(_scan_normalized)


def _normalized(text: str) -> frozenset[str]:
    """Every line of `text`, timestamps aside and spaces collapsed (what `changed_lines` compares)."""
    return _normalized_memo(text) if len(text) <= MEMO_TEXT_CHARS else _scan_normalized(text)


@lru_cache(maxsize=NAMES_MEMO_ENTRIES)
def _call_key_of_raw(name: str, raw: str) -> str:
    return name + json.dumps(parse_arguments(raw), sort_keys=True, default=str)


def _call_key(name: str, raw: Any) -> str:
    """The identity of a call (tool name and arguments, keys sorted): runs with one key are runs
    of the same call."""
    if isinstance(raw, str) and len(raw) <= MEMO_TEXT_CHARS:
        return _call_key_of_raw(name, raw)
    return name + json.dumps(parse_arguments(raw), sort_keys=True, default=str)


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
        normalized = _normalized(other)
        out = [line for line in text.split("\n") if line.strip() and _norm(line) not in normalized]
    return out if len(out) <= MAX_CHANGED_LINES else []


def named_lines(text: str, named: set[str]) -> list[str]:
    """The lines of `text` holding a name of `named` that occurs on at most MAX_NAMED_LINES of
    them, in order."""
    if not named:
        return []
    text = text[:SCAN_CHARS]
    lowered = text.lower()
    present = [name for name in named if name in lowered]
    if not present:
        return []
    lines = text.split("\n")
    out: dict[int, None] = {}
    for name in present:
        hits = [i for i, line in enumerate(lines) if name in line.lower()]
        if len(hits) <= MAX_NAMED_LINES:
            out.update(dict.fromkeys(hits))
    return [lines[i] for i in sorted(out)]


def _cut(line: str) -> str:
    flat = " ".join(line.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"


class FactContext:
    """The named identifiers and the runs of each call in `rows` (one compaction event's view)."""

    def __init__(self, rows: Sequence[MessageRecord], start: int = 0) -> None:
        self.rows = rows
        self.start = start
        self._identity: dict[int, str] = {}
        self._runs: dict[str, list[int]] = {}
        self._last_named: dict[str, int] = {}
        self._built = False

    def _build(self) -> None:
        calls: dict[str, tuple[str, Any]] = {}  # call id → tool name, raw arguments
        for i in range(self.start, len(self.rows)):
            message = self.rows[i].message
            role = self.rows[i].role
            if role == "assistant":
                for call in message.get("tool_calls") or ():
                    function = call.get("function") or {}
                    calls[str(call.get("id", ""))] = (
                        str(function.get("name", "")),
                        function.get("arguments"),
                    )
            if role in ("user", "assistant"):
                for name in names_in(_text_of(message)):
                    self._last_named[name] = i
            if role == "tool":
                name, raw = calls.get(str(message.get("tool_call_id", "")), (str(message.get("name", "")), None))
                if name and name not in _NOT_COMPARED:
                    key = _call_key(name, raw)
                    self._identity[i] = key
                    self._runs.setdefault(key, []).append(i)
        self._built = True

    def named_after(self, i: int) -> set[str]:
        """The identifiers a user or assistant message after row `i` names."""
        if not self._built:
            self._build()
        return {name for name, last in self._last_named.items() if last > i}

    def neighbours(self, i: int) -> tuple[int | None, int | None]:
        """The previous and the next run of row `i`'s call (same tool, same arguments)."""
        if not self._built:
            self._build()
        key = self._identity.get(i)
        if key is None:
            return None, None
        runs = self._runs[key]
        at = runs.index(i)
        return (runs[at - 1] if at else None), (runs[at + 1] if at + 1 < len(runs) else None)

    def kept(self, i: int, content: str) -> list[str]:
        """Lines of row `i`'s output (`content`) to keep, best first, each flattened and cut:
        those a later message names, then what its previous run lacked (a re-read's change),
        then what its next run no longer has (a superseded run's news)."""
        out: list[str] = list(named_lines(content, self.named_after(i)))
        before, after = self.neighbours(i)
        for other in (before, after):
            if other is not None:
                out += changed_lines(content, _text_of(self.rows[other].message))
        return [_cut(line) for line in dict.fromkeys(out) if line.strip()]

    def named(self, i: int, content: str) -> list[str]:
        """Only the lines of row `i`'s output that a later message names (an ephemeral output's
        stub: a stale listing keeps nothing else)."""
        return [_cut(line) for line in named_lines(content, self.named_after(i)) if line.strip()]

    def lost(self, i: int, content: str) -> list[str]:
        """What a superseded row `i` keeps: the lines a later message names, then those its next
        run no longer has."""
        out: list[str] = list(named_lines(content, self.named_after(i)))
        _, after = self.neighbours(i)
        if after is not None:
            out += changed_lines(content, _text_of(self.rows[after].message))
        return [_cut(line) for line in dict.fromkeys(out) if line.strip()]


def kept_by_row(context: FactContext, indices: Sequence[int]) -> Mapping[int, list[str]]:
    """`FactContext.kept` of each tool row of `indices`, by message id (only rows with some)."""
    out: dict[int, list[str]] = {}
    for i in indices:
        row = context.rows[i]
        if row.role == "tool":
            lines = context.kept(i, _text_of(row.message))
            if lines:
                out[row.id] = lines
    return out
