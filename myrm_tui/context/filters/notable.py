"""Notable lines of a long tool output: the one-off facts a summary would otherwise never see.

Why: a summary is built from excerpts (the head and tail of each output, where commands print
what ran and their verdict), so a fact in the middle of a 400-line build log or a 200 KB JSON
page (a warning among info lines, a record with a field no other record has) never reached it;
recall still finds it, but only if the model knows to ask. This is the cheap pass over the whole
output that runs before the excerpt: no model, linear in the output, and it only speaks up in
*repetitive* output, where a line that breaks the pattern carries information.

What counts as a break, whatever the format (none of it keys on a syntax of its own):
- a key that occurs once among many keyed lines (`key=value` logs, JSON `"key":`, YAML `key:`):
  the extra field of one record, a config override among request logs;
- a record of a one-line JSON array whose keys differ from the others';
- a line whose shape (the kinds of its first tokens, or its field count in delimited rows) is
  rare while most lines share one shape: a traceback inside a log, a row with an extra column;
- a rare value in a column that otherwise takes a few values (a log's level or logger, a test's
  PASSED / FAILED, a package's `ii` / `hi` status), among the lines of one shape.
Warnings, errors and an exception's message rank such lines higher: a log has plenty of ordinary
WARN lines, and in a traceback the message is the line that says what went wrong.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from myrm_tui.context.filters.markers import MARKER_CLOSE, MARKER_OPEN, marker

# `key=value` with a plain identifier key (not `==`, not a URL query's `&k=`): log and CLI facts.
_KV_KEY = re.compile(r"(?<![\w.&?=-])([A-Za-z_][\w.-]{0,39})=(?=[^\s=])")
# A JSON object key at the start of a pretty-printed line (`jq .`, `json.dumps(indent=…)`) with
# a value on the same line: a key that opens an object or a list (`"data": [`) holds no fact.
_JSON_KEY = re.compile(r'^\s*"([^"\\]{1,40})"\s*:\s*(?![\[{]\s*$)\S')
# A YAML mapping key at the start of a line (`  replicas: 3`, `- name: x`) with a value on it.
_YAML_KEY = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w.-]{0,39}):\s+(?![|>]\s*$)\S")
_SEVERITY = re.compile(r"\b(?:warn|warning|error|fatal|critical|failed|failure|traceback|exception|panic)\b", re.I)
# An exception's message (`ValueError: …`, `E   AssertionError: …`, `java.io.IOException: …`):
# in a traceback, the line that says what went wrong.
_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failure)\b:")
# What every match of `_EXCEPTION` contains (`\b` always holds between its word and the colon):
# a substring test settles most texts and lines at C speed before the regex, whose `\w*` runs
# on every capitalised word (INFO, GET, a logger's name) of a log.
_EXCEPTION_ENDS = ("Error:", "Exception:", "Failure:")
_OPENER = re.compile(r"[\[{(:]\s*$")
# Keys whose value must never be lifted into a summary, whatever the redactor later decides.
_SECRET_KEY = re.compile(r"pass|secret|token|auth|cred|private|api_?key|session|cookie", re.I)
# Below this many keyed (or non-empty) lines an output is not repetitive enough for "occurs
# once" to mean anything: in a 10-line config file every key occurs once.
MIN_KEYED_LINES = 20
# A notable line is shown cut to this many characters (a log line with its fact fits).
LINE_CHARS = 200
# A leading timestamp says nothing a summary needs and eats the room a fact needs.
_TIMESTAMP = re.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|[+-]\d{2}:?\d{2})?\]?\s*")
# Outputs are scanned up to this many characters: the spill cap's order of magnitude, so the
# pass stays linear and bounded even on a 1 GB output (the rest is behind its handle anyway).
SCAN_CHARS = 2_000_000
# Shape rules. A line's shape is the kind of its first SHAPE_TOKENS tokens (word, number, or the
# punctuation itself); the output has a shape when one covers DOMINANT_SHARE of its lines, and a
# line of a shape seen at most RARE_COUNT times breaks it. Why these: a traceback in a log, a
# row with an extra column, an error line in a listing occur once or twice; a third occurrence
# makes a kind of line, not a break.
SHAPE_TOKENS = 3
DOMINANT_SHARE = 0.6
RARE_COUNT = 2
# A column (of the first COLUMNS tokens, among lines of one shape) is categorical when its values
# seen at least COMMON_COUNT times cover COMMON_SHARE of the lines; more than MAX_RARE_VALUES rare
# values mean a long tail (names, paths), where rare is the rule, not a break.
COLUMNS = 4
COMMON_COUNT = 3
COMMON_SHARE = 0.9
MAX_RARE_VALUES = 3
# Delimited rows: a delimiter occurring the same number of times (at least twice) in this share
# of the lines makes the output a table, split on it.
DELIMITERS = (",", "\t", "|", ";")
DELIMITED_SHARE = 0.8
# Headers and footers (a table's title, a tool's banner, a test run's verdict) are shown by every
# excerpt's head and tail and are no break of the body's shape.
HEADER_LINES = 5
FOOTER_LINES = 2
# When more lines than this share (or this count) break the shape, the output has no one shape
# worth speaking of: only breaks that are also warnings or errors stay.
MAX_BREAK_SHARE = 0.02
MAX_BREAK_LINES = 3
# One-line JSON arrays (`pip list --format json`, an API dump): at least this many objects.
MIN_JSON_RECORDS = 10
SHAPE_SCORE = 3
KEY_SCORE = 3
SEVERITY_SCORE = 2
EXCEPTION_SCORE = 3


@dataclass(frozen=True)
class NotableLine:
    index: int  # line number in the output (0-based), for order and for "where"
    text: str
    score: int
    part: bool = False  # a record inside that line (a one-line JSON array), not the whole line
    at: int = 0  # a part's character offset in the output (where the record is, roughly)


def _keys(line: str) -> list[str]:
    # Each pattern needs its one literal (`=`, `"`, `:`): a substring test skips the regex on
    # most lines of most outputs, which the scan runs once per line.
    keys = _KV_KEY.findall(line) if "=" in line else []
    json_key = _JSON_KEY.match(line) if '"' in line else None
    if json_key:
        keys.append('"' + json_key.group(1) + '"')
    elif ":" in line:
        yaml_key = _YAML_KEY.match(line)
        if yaml_key and "://" not in yaml_key.group(0):
            keys.append(yaml_key.group(1) + ":")
    return keys


def _raises(text: str) -> bool:
    """Whether `text` holds an exception's message (`_EXCEPTION`)."""
    return any(end in text for end in _EXCEPTION_ENDS) and _EXCEPTION.search(text) is not None


def _raising_lines(text: str, most: int) -> list[int]:
    """The indices of the lines of `text` (split at "\\n" only: the caller's lines must be
    exactly `text.split("\\n")`) that hold an exception's message, in order, but no
    more than `most` + 1 of them (the caller only asks whether there are more than `most`).
    One pass of the pattern over the whole text instead of a search per line: a match never
    spans a line (`\\w` stops at a newline, `\\b` holds at a line's start as at the text's)."""
    out: list[int] = []
    line = at = 0
    for match in _EXCEPTION.finditer(text):
        line += text.count("\n", at, match.start())
        at = match.start()
        if not out or out[-1] != line:
            out.append(line)
            if len(out) > most:
                break
    return out


def _bonus(line: str) -> int:
    return (SEVERITY_SCORE if _SEVERITY.search(line) else 0) + (EXCEPTION_SCORE if _raises(line) else 0)


def _shown(line: str) -> str:
    text = " ".join(_TIMESTAMP.sub("", line).split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


# ASCII letters and digits: what `str.isalpha` / `str.isdigit` accept among ASCII characters.
_ASCII_ALPHA = re.compile(r"[A-Za-z]")
_ASCII_DIGIT = re.compile(r"[0-9]")


class _Kinds(dict[str, str]):
    """A token → kind table for one scan: "a" for a token with a letter, "9" for one with digits
    and no letter, else the token's own first characters (punctuation). A repetitive output
    repeats its tokens (a log's level, a listing's mode), and the per-character tests were most
    of the shape pass; the kind is worked out here, in the miss, not in a second call."""

    def __missing__(self, token: str) -> str:
        if token.isalnum() and not token.isnumeric():
            kind = "a"  # every character a letter or a digit, not all of them numbers: a letter
        elif token.isalnum() and token.isascii():
            kind = "9"  # ASCII numbers are digits: no letter among them
        elif token.isascii():  # a regex search instead of a Python test per character
            # A letter is alphanumeric too: one search decides most tokens.
            kind = "a" if _ASCII_ALPHA.search(token) else "9" if _ASCII_DIGIT.search(token) else token[:3]
        elif not any(ch.isalnum() for ch in token):
            kind = token[:3]
        else:
            kind = "a" if any(ch.isalpha() for ch in token) else "9"
        self[token] = kind
        return kind


# The kinds of a token with a letter or a digit (a punctuation kind is the token's own
# characters, never one of these: they are alphanumeric).
_ALNUM_KINDS = frozenset(("a", "9"))


def _delimiter(body: list[str], text: str) -> str | None:
    """`text`: the output the `body` lines come from. A delimiter that splits rows occurs at
    least twice in DELIMITED_SHARE of them, so one count over the text rules most out."""
    for delimiter in DELIMITERS:
        if text.count(delimiter) < 2 * DELIMITED_SHARE * len(body):
            continue
        counts = Counter(line.count(delimiter) for line in body)
        count, lines = counts.most_common(1)[0]
        if count >= 2 and lines >= DELIMITED_SHARE * len(body):
            return delimiter
    return None


def _constant_column(members: list[int], tokens: dict[int, list[str]]) -> bool:
    """Whether the lines `members` share a literal at some column (a log's level, a listing's
    mode, a test's verdict): records of one kind, not prose or code that happen to start alike."""
    for column in range(COLUMNS):
        values = Counter(tokens[i][column] for i in members if len(tokens[i]) > column)
        if values:
            value, count = values.most_common(1)[0]
            if any(ch.isalnum() for ch in value) and count >= DOMINANT_SHARE * len(members):
                return True
    return False


def _rare_in_columns(
    shape: tuple[str, ...], members: list[int], tokens: dict[int, list[str]], kinds: _Kinds
) -> Iterator[int]:
    """The `members` (lines of one shape) whose word or number in some column is one of a few
    rare values among common ones: the run's one odd status, host or level."""
    for column in range(COLUMNS):
        if column < len(shape):
            # Every member has this column, of the kind the shape names: one test for them all
            # (the shape is the kinds of a line's first tokens).
            if shape[column] not in _ALNUM_KINDS:
                continue
            cells = [(i, tokens[i][column]) for i in members]
        else:
            cells = [(i, t[column]) for i in members if len(t := tokens[i]) > column]
            cells = [(i, v) for i, v in cells if kinds[v] in _ALNUM_KINDS]
        values = Counter(v for _, v in cells)
        common = sum(n for n in values.values() if n >= COMMON_COUNT)
        rare = {v for v, n in values.items() if n <= RARE_COUNT}
        if rare and len(rare) <= MAX_RARE_VALUES and common >= COMMON_SHARE * len(cells):
            yield from (i for i, v in cells if v in rare)


def _shape_breaks(lines: list[str], text: str) -> dict[int, int]:
    """Line index → score of the lines that break the output's shape (rules above); `text` is
    `lines` joined by newlines."""
    body = [i for i, line in enumerate(lines) if line.strip()]
    if len(body) < MIN_KEYED_LINES:
        return {}
    delimiter = _delimiter([lines[i] for i in body], text)
    if delimiter is None:
        tokens = {i: lines[i].split(None, COLUMNS)[:COLUMNS] for i in body}
    else:
        tokens = {i: [cell.strip() for cell in lines[i].split(delimiter)] for i in body}
    eligible = range(HEADER_LINES, len(lines) - FOOTER_LINES)
    flagged: set[int] = set()
    if delimiter is not None:  # a row with more or fewer fields than the table's
        widths = Counter(len(tokens[i]) for i in body)
        flagged.update(i for i in body if widths[len(tokens[i])] <= RARE_COUNT and i in eligible)
    seen = _Kinds()
    shapes = {i: tuple(map(seen.__getitem__, tokens[i][:SHAPE_TOKENS])) for i in body}
    groups: dict[tuple[str, ...], list[int]] = {}
    for i in body:
        groups.setdefault(shapes[i], []).append(i)
    dominant = max(groups.values(), key=len)
    if len(dominant) >= DOMINANT_SHARE * len(body) and _constant_column(dominant, tokens):
        flagged.update(i for i in body if len(groups[shapes[i]]) <= RARE_COUNT and i in eligible)
    for shape, members in groups.items():
        if len(members) >= MIN_KEYED_LINES:
            flagged.update(i for i in _rare_in_columns(shape, members, tokens, seen) if i in eligible)
    # An exception's message ends a run: notable on its own when the output has one or two.
    # The pattern never spans a line (`\w` stops at a newline, `\b` holds at a line's start):
    # one search of the whole text settles most outputs, which raise nothing.
    raised = _raising_lines(text, RARE_COUNT) if any(end in text for end in _EXCEPTION_ENDS) else []
    if len(raised) <= RARE_COUNT:
        flagged.update(raised)
    # A line that only opens a container (`"page": {`, `services:`) holds no fact of its own.
    scored = {i: SHAPE_SCORE + _bonus(lines[i]) for i in flagged if not _OPENER.search(lines[i])}
    if len(scored) > max(MAX_BREAK_LINES, MAX_BREAK_SHARE * len(body)):
        scored = {i: s for i, s in scored.items() if s > SHAPE_SCORE}
    return scored


def _json_records(text: str) -> Iterator[NotableLine]:
    """The objects of a one-line JSON array whose keys differ from most objects' keys."""
    stripped = text.strip()
    if "\n" in stripped or not stripped.startswith("[{"):
        return
    try:
        value = json.loads(stripped)
    except ValueError:
        return
    if not isinstance(value, list) or len(value) < MIN_JSON_RECORDS or not all(isinstance(v, dict) for v in value):
        return
    shapes = Counter(frozenset(v) for v in value)
    usual, count = shapes.most_common(1)[0]
    if count < DOMINANT_SHARE * len(value):
        return
    for position, record in enumerate(value):
        keys = frozenset(record)
        if shapes[keys] > RARE_COUNT or any(_SECRET_KEY.search(str(k)) for k in keys - usual):
            continue
        text_of = json.dumps(record, ensure_ascii=False)
        at = len(text) * position // len(value)
        yield NotableLine(0, _shown(text_of), KEY_SCORE * len(keys ^ usual) + _bonus(text_of), part=True, at=at)


def _scored(lines: list[str], per_line: list[list[str]], text: str) -> Iterator[NotableLine]:
    keyed = sum(1 for keys in per_line if keys)
    counts = Counter(key for keys in per_line for key in set(keys)) if keyed >= MIN_KEYED_LINES else Counter()
    novel = [sum(1 for key in set(keys) if counts[key] == 1) for keys in per_line]
    # Many one-off keys (keyword arguments in source code, a config file's settings) make keys
    # no pattern to break: none of them is singled out.
    if sum(1 for n in novel if n) > max(MAX_BREAK_LINES, MAX_BREAK_SHARE * keyed):
        novel = [0] * len(lines)
    shape = _shape_breaks(lines, text)
    for index, (line, keys) in enumerate(zip(lines, per_line, strict=True)):
        if not novel[index] and index not in shape:
            continue
        if any(_SECRET_KEY.search(key) for key in keys):
            continue
        score = KEY_SCORE * novel[index] + (_bonus(line) if novel[index] else 0)
        score = max(score, shape.get(index, 0))
        yield NotableLine(index, _shown(line), score)


# Scans remembered (`_found`): one long output is scanned whole up to four times (its spill at
# ingest, its excerpt on arrival, the compactor's filter, the summary of its rows, the last often
# a hundred turns later), and a keyed output of a few hundred lines costs milliseconds a scan.
# Every scan is kept, the ones that find nothing too: they are most outputs, and a compaction
# event scans the forty it removes twice (mask stubs, summary findings), a regex per line each,
# and most of them were scanned once already on arrival. 1,024 covers the live history of a 200k
# window (a few hundred outputs). Keys are mostly the history's own strings, but a join or a
# cut can make a copy, so their characters are bounded too (a few dozen MB at worst).
MEMO_ENTRIES = 1_024
MEMO_CHARS = 16_000_000
_memo: OrderedDict[str, tuple[NotableLine, ...]] = OrderedDict()
_memo_chars = 0  # characters of the keys in `_memo`
_memo_lock = threading.Lock()  # background summaries scan too


def clear_memo() -> None:
    """Forget every remembered scan (tests start from an empty memo)."""
    global _memo_chars
    with _memo_lock:
        _memo.clear()
        _memo_chars = 0


def _found(scanned: str) -> tuple[NotableLine, ...]:
    """Every notable line of `scanned`, in output order (split only on a miss: a hit is a
    compaction event's second look at an output, and the split was most of its cost)."""
    global _memo_chars
    with _memo_lock:
        hit = _memo.get(scanned)
        if hit is not None:
            _memo.move_to_end(scanned)
            return hit
    lines = scanned.split("\n")
    per_line = [_keys(line) for line in lines]
    found = tuple(_json_records(scanned)) + tuple(_scored(lines, per_line, scanned))
    with _memo_lock:
        if scanned not in _memo:
            _memo[scanned] = found
            _memo_chars += len(scanned)
        while len(_memo) > MEMO_ENTRIES or (_memo_chars > MEMO_CHARS and len(_memo) > 1):
            _memo_chars -= len(_memo.popitem(last=False)[0])
    return found


def note_weight(text: str) -> int:
    """How a notable line that was already found (an excerpt's note, read back without the scan
    that found it) ranks against another: warnings, errors and an exception's message first,
    then a line that carries a concrete value. Only an order: every note was a break."""
    return _bonus(text) + (1 if carries_value(text) else 0)


def notable_lines(text: str, limit: int, *, skip_head: int = 0, skip_tail: int = 0) -> list[NotableLine]:
    """Up to `limit` lines of `text` that break its pattern, best first, then in output order.
    `skip_head`/`skip_tail` (characters) leave out what an excerpt already shows."""
    if limit <= 0 or not text:
        return []
    scanned = text[:SCAN_CHARS]
    found: Sequence[NotableLine] = _found(scanned)
    if skip_head or skip_tail:
        lines = scanned.split("\n")
        starts = []
        offset = 0
        for line in lines:
            starts.append(offset)
            offset += len(line) + 1
        tail_from = len(text) - skip_tail
        found = [
            n for n in found if _span(n, starts, lines)[0] >= skip_head and _span(n, starts, lines)[1] <= tail_from
        ]
    best = sorted(found, key=lambda n: (-n.score, n.index))[:limit]
    return sorted(best, key=lambda n: n.index)


def _span(found: NotableLine, starts: list[int], lines: list[str]) -> tuple[int, int]:
    """Where in the text a notable line (or a record inside one) is, in characters."""
    if found.part:
        return found.at, found.at + len(found.text)
    start = starts[found.index]
    return start, start + len(lines[found.index])


# A token that carries a value: letters and digits together (`9184ms`, `v2.3.1`, `eu-west-3`,
# `OPS-4471`, `db-4.prod`), at least three characters. A bare number is no such token (counts,
# line numbers and dates are everywhere); our own handles (`msg:12`, `S3`, `vault://…`) are not.
_VALUE_TOKEN = re.compile(r"(?<![\w.+/:-])(?=[\w.+/:-]*\d)(?=[\w.+/:-]*[A-Za-z])[\w.+/:-]{3,}")
_OWN_HANDLE = re.compile(r"\b(?:msg:\d+|S\d+|vault://[0-9a-fA-F]+)")


def carries_value(text: str) -> bool:
    """Whether `text` states a concrete value the session may need verbatim later: a `key=value`
    (never a secret-named key) or a token of letters and digits (`now: port=4821`, `9184ms`,
    `v2.3.1`), unlike `edit` or `"limit": 720,`."""
    keys = _KV_KEY.findall(text)
    if keys and not any(_SECRET_KEY.search(key) for key in keys):
        return True
    return bool(_VALUE_TOKEN.search(_OWN_HANDLE.sub(" ", text)))


states_value = carries_value  # the name list caps have always used


# A sentence of conversation text: split after ., ! or ? followed by whitespace (values such as
# `v3.10.21` or `db-4.prod` have no space after their dots).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def stated_values(text: str) -> list[str]:
    """The sentences of `text` that state a concrete value (`carries_value`; never a secret-named
    key), in order: a value the user gives in passing ("ops told me the relay host is
    heron-relay-17.internal") is a standing fact of the session, and the ask that carried it is
    cut or dropped long before the fact stops mattering."""
    out = []
    for sentence in _SENTENCE_END.split(text):
        keys = _KV_KEY.findall(sentence)
        if any(_SECRET_KEY.search(key) for key in keys):
            continue
        if carries_value(sentence):
            out.append(" ".join(sentence.split()))
    return out


# How an excerpt shows a notable line (`… line 153: WARN override applied port=4821 …`): one
# format, so a summary made later from the excerpt alone (the whole output is in the vault)
# still finds the fact — in a short excerpt nothing is "repetitive" enough to be found again.
_NOTE = re.compile("^" + re.escape(MARKER_OPEN) + r"line \d+: (.+)" + re.escape(MARKER_CLOSE) + "$")


def note_line(found: NotableLine) -> str:
    return marker(f"line {found.index + 1}: {found.text}")


def noted_facts(text: str) -> list[str]:
    """The notable lines an excerpt carries as notes (see `note_line`), in order."""
    return [m.group(1) for m in map(_NOTE.match, text.split("\n")) if m]


def standout_facts(text: str, limit: int) -> list[str]:
    """Up to `limit` one-off facts of an output, best first: the notes its excerpt carries (a
    spilled output), the heaviest first (`note_weight`, then output order), else the notable
    lines of the whole text, the best-scored first. Raw lines: the caller redacts."""
    notes = noted_facts(text)
    if notes:
        best = sorted(range(len(notes)), key=lambda i: (-note_weight(notes[i]), i))[:limit]
        return [notes[i] for i in best]
    found = notable_lines(text, limit)
    return [line.text for line in sorted(found, key=lambda n: (-n.score, n.index))]
