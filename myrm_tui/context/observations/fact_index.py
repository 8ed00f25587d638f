"""The session's facts index: what `FactContext` reads, grown as rows arrive.

Why: every compaction event asks which lines of old outputs to keep (`fact_context.py`), and
that needs the names every user and assistant message says and the runs of every call. Built
from scratch at each event (twice: the plan and the summaries), it rescanned the whole session,
so an event's cost grew with the session. The engine's history owns one index: each row is
scanned once, when the index first sees it, and the per-row answers (the names an output holds,
what one run lacks of another) are remembered by row id. Stored rows never change and a session
only grows, so nothing here depends on an event: a query reads exactly what a scan of the rows
would give. A row list that is not the one seen before (shorter, or another row where the last
seen one was) starts the index over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import parse_arguments
from myrm_tui.store.records import MessageRecord

# Identifiers a message can name: snake_case, kebab-case, dotted or CamelCase names of at least
# MIN_NAME_CHARS characters. Plain words are not names: "the", "config", "retry" occur everywhere.
_NAME = re.compile(r"(?<![\w./-])([A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)")
MIN_NAME_CHARS = 5
# Tools whose runs are compared: reading or running the same thing again. Writes are not.
_NOT_COMPARED = frozenset({"file_write", "file_edit"})
# Each row is scanned once per engine, but the same texts recur across sessions and in a
# FactContext without an engine index; these memos remember the pure per-text results (names,
# call keys) by content, so they hold no session state. Only texts up to MEMO_TEXT_CHARS are
# remembered (a few dozen MB at worst); a longer one is scanned each time.
NAMES_MEMO_ENTRIES = 4_096
MEMO_TEXT_CHARS = 100_000
# Starts whose run tables are kept: an event asks for two (the planner's live start and the
# summaries' whole session); the next event moves the live start once.
START_TABLES = 4


def names_in(text: str) -> set[str]:
    """The identifiers `text` names, lowercased."""
    return set(_names(text)) if len(text) <= MEMO_TEXT_CHARS else set(_scan_names(text))


def _scan_names(text: str) -> frozenset[str]:
    return frozenset(m.lower() for m in _NAME.findall(text) if len(m) >= MIN_NAME_CHARS)


_names = lru_cache(maxsize=NAMES_MEMO_ENTRIES)(_scan_names)


@lru_cache(maxsize=NAMES_MEMO_ENTRIES)
def _call_key_of_raw(name: str, raw: str) -> str:
    return name + json.dumps(parse_arguments(raw), sort_keys=True, default=str)


def _call_key(name: str, raw: Any) -> str:
    """The identity of a call (tool name and arguments, keys sorted): runs with one key are runs
    of the same call."""
    if isinstance(raw, str) and len(raw) <= MEMO_TEXT_CHARS:
        return _call_key_of_raw(name, raw)
    return name + json.dumps(parse_arguments(raw), sort_keys=True, default=str)


class _RunTable:
    """The runs of each call among the tool rows from `start` on, as a FactContext built at
    `start` would see them (a call made before `start` is unknown there: its result falls back to
    the result's own tool name)."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.upto = 0  # position in FactIndex.tool_rows scanned so far
        self.identity: dict[int, str] = {}
        self.runs: dict[str, list[int]] = {}


class FactIndex:
    """Per-row scans of a session's rows, each done once (see the module docstring)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.seen = 0  # rows[: seen] are scanned
        self._first_id: int | None = None
        self._last_id: int | None = None
        self._calls: dict[str, tuple[int, str, Any]] = {}  # call id → assistant row, tool name, raw arguments
        # Name → the last row naming it; ordered by that row (a name named again moves to the end).
        self.last_named: dict[str, int] = {}
        self.vocabulary: list[str] = []  # every name, in order of first mention
        self._known: set[str] = set()
        # Tool row → (the row of its call or -1, the key by that call, the key by the result alone).
        self._keys: dict[int, tuple[int, str | None, str | None]] = {}
        self.tool_rows: list[int] = []
        self._tables: dict[int, _RunTable] = {}
        # Row id → (names of the vocabulary checked so far, those the row's output contains).
        self.present: dict[int, tuple[int, list[str]]] = {}
        # (row id, other row id) → `changed_lines` of the two outputs.
        self.changed: dict[tuple[int, int], list[str]] = {}
        # Row id → (the names it was asked about, the lines holding them).
        self.named: dict[int, tuple[frozenset[str], list[str]]] = {}
        # Row id → what the compaction planner asks of a tool output at every event, twice (its
        # fenced pass and its whole pass; stages/compress.py), over every live output: the
        # output's sha256 (dedup), whether it reads as failed (the mask order), its call's
        # identity (superseded). Each is a pure function of the row, and stored rows never change.
        self.digests: dict[int, str] = {}
        self.failed: dict[int, bool] = {}
        self.call_keys: dict[int, tuple[tuple[str, dict[str, Any]], str]] = {}  # (the call, its key)

    def catch_up(self, rows: Sequence[MessageRecord]) -> None:
        """Scan the rows not seen yet; start over when `rows` is not the list seen so far."""
        if self.seen and (
            len(rows) < self.seen or rows[0].id != self._first_id or rows[self.seen - 1].id != self._last_id
        ):
            self._reset()
        for i in range(self.seen, len(rows)):
            self._scan(i, rows[i])
        if len(rows) > self.seen:
            self.seen = len(rows)
            self._first_id, self._last_id = rows[0].id, rows[-1].id

    def _scan(self, i: int, row: MessageRecord) -> None:
        message, role = row.message, row.role
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                self._calls[str(call.get("id", ""))] = (
                    i,
                    str(function.get("name", "")),
                    function.get("arguments"),
                )
        if role in ("user", "assistant"):
            for name in names_in(compaction_text(message)):
                if name not in self._known:
                    self._known.add(name)
                    self.vocabulary.append(name)
                self.last_named.pop(name, None)
                self.last_named[name] = i
        if role == "tool":
            own = str(message.get("name", ""))
            fallback = _call_key(own, None) if own and own not in _NOT_COMPARED else None
            found = self._calls.get(str(message.get("tool_call_id", "")))
            if found is None:
                self._keys[i] = (-1, None, fallback)
            else:
                at, name, raw = found
                self._keys[i] = (at, _call_key(name, raw) if name and name not in _NOT_COMPARED else None, fallback)
            self.tool_rows.append(i)

    def key(self, i: int, start: int) -> str | None:
        """Row `i`'s call identity as a FactContext built at `start` sees it."""
        keys = self._keys.get(i)
        if keys is None or i < start:
            return None
        at, by_call, fallback = keys
        return by_call if at >= start else fallback

    def table(self, start: int) -> _RunTable:
        """The runs of each call from `start` on (kept for the last START_TABLES starts)."""
        table = self._tables.pop(start, None) or _RunTable(start)
        self._tables[start] = table
        while len(self._tables) > START_TABLES:
            del self._tables[next(iter(self._tables))]
        rows = self.tool_rows
        if table.upto == 0:
            while table.upto < len(rows) and rows[table.upto] < start:
                table.upto += 1
        for i in rows[table.upto :]:
            k = self.key(i, start)
            if k is not None:
                table.identity[i] = k
                table.runs.setdefault(k, []).append(i)
        table.upto = len(rows)
        return table

    def names_present(self, row_id: int, text: str) -> list[str]:
        """The names of the vocabulary `text` (a row's output) contains, case aside; names added
        since the last ask are the only ones checked, and the text is only lowercased then (a
        copy of up to SCAN_CHARS per output, at every event that read its kept lines)."""
        checked, found = self.present.get(row_id, (0, []))
        if checked < len(self.vocabulary):
            lowered = text.lower()
            found = found + [name for name in self.vocabulary[checked:] if name in lowered]
            self.present[row_id] = (len(self.vocabulary), found)
        return found
