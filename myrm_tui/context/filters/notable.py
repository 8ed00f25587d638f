"""Notable lines of a long tool output: the one-off facts a summary would otherwise never see.

Why: a summary is built from excerpts (the head and tail of each output, where commands print
what ran and their verdict), so a fact in the middle of a 400-line build log or a 200 KB JSON
page (`override applied … port=4821`, a record with a field no other record has) never reached
it; recall still finds it, but only if the model knows to ask. This is the cheap pass over the
whole output that runs before the excerpt: no model, linear in the output, and it only speaks
up in *repetitive* output, where a line that breaks the pattern carries information.

What counts as a break: a `key=value` or JSON `"key":` whose key occurs once in an output full
of keyed lines (a config override among request logs, an extra field among records). Warnings
and errors only rank such lines higher: a log has plenty of ordinary WARN lines.
"""

from __future__ import annotations

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
_SEVERITY = re.compile(r"\b(?:warn|warning|error|fatal|critical|failed|failure|traceback|exception|panic)\b", re.I)
# Keys whose value must never be lifted into a summary, whatever the redactor later decides.
_SECRET_KEY = re.compile(r"pass|secret|token|auth|cred|private|api_?key|session|cookie", re.I)
# Below this many keyed lines an output is not repetitive enough for "occurs once" to mean
# anything: in a 10-line config file every key occurs once.
MIN_KEYED_LINES = 20
# A notable line is shown cut to this many characters (a log line with its fact fits).
LINE_CHARS = 200
# A leading timestamp says nothing a summary needs and eats the room a fact needs.
_TIMESTAMP = re.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|[+-]\d{2}:?\d{2})?\]?\s*")
# Outputs are scanned up to this many characters: the spill cap's order of magnitude, so the
# pass stays linear and bounded even on a 1 GB output (the rest is behind its handle anyway).
SCAN_CHARS = 2_000_000


@dataclass(frozen=True)
class NotableLine:
    index: int  # line number in the output (0-based), for order and for "where"
    text: str
    score: int


def _keys(line: str) -> list[str]:
    keys = _KV_KEY.findall(line)
    json_key = _JSON_KEY.match(line)
    if json_key:
        keys.append('"' + json_key.group(1) + '"')
    return keys


def _scored(lines: list[str], per_line: list[list[str]]) -> Iterator[NotableLine]:
    keyed = sum(1 for keys in per_line if keys)
    if keyed < MIN_KEYED_LINES:
        return
    counts = Counter(key for keys in per_line for key in set(keys))
    for index, (line, keys) in enumerate(zip(lines, per_line, strict=True)):
        if any(_SECRET_KEY.search(key) for key in keys):
            continue
        novel = sum(1 for key in set(keys) if counts[key] == 1)
        if not novel:
            continue
        score = 3 * novel + (2 if _SEVERITY.search(line) else 0)
        text = " ".join(_TIMESTAMP.sub("", line).split())
        if len(text) > LINE_CHARS:
            text = text[: LINE_CHARS - 1] + "…"
        yield NotableLine(index, text, score)


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
    found = tuple(_scored(lines, per_line))
    with _memo_lock:
        if scanned not in _memo:
            _memo[scanned] = found
            _memo_chars += len(scanned)
        while len(_memo) > MEMO_ENTRIES or (_memo_chars > MEMO_CHARS and len(_memo) > 1):
            _memo_chars -= len(_memo.popitem(last=False)[0])
    return found


def note_weight(text: str) -> int:
    """The score a notable line (already found novel, e.g. an excerpt's note) has on its own:
    every key it states counts, as in `_scored`, plus the severity bonus. Lets a summary prefer
    `override applied port=4821` over a page's one-off `"limit": 720`."""
    return 3 * len(set(_keys(text))) + (2 if _SEVERITY.search(text) else 0)


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
            n for n in found if starts[n.index] >= skip_head and starts[n.index] + len(lines[n.index]) <= tail_from
        ]
    best = sorted(found, key=lambda n: (-n.score, n.index))[:limit]
    return sorted(best, key=lambda n: n.index)


def states_value(text: str) -> bool:
    """Whether `text` states a `key=value` (never a secret-named key): a value the session may
    need verbatim later (`now: port=4821`), unlike `edit` or `"limit": 720,`."""
    keys = _KV_KEY.findall(text)
    return bool(keys) and not any(_SECRET_KEY.search(key) for key in keys)


# A sentence of conversation text: split after ., ! or ? followed by whitespace (values such as
# `v3.10.21` or `db-4.prod` have no space after their dots).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def stated_values(text: str) -> list[str]:
    """The sentences of `text` that state a `key=value` (never a secret-named key), in order:
    a value the user gives in passing ("ops told me the value is port=4821") is a standing fact of
    the session, and the ask that carried it is cut or dropped long before the fact stops mattering."""
    out = []
    for sentence in _SENTENCE_END.split(text):
        keys = _KV_KEY.findall(sentence)
        if keys and not any(_SECRET_KEY.search(key) for key in keys):
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


def standout_facts(text: str, limit: int, share: float) -> list[str]:
    """The one-off facts of an output, in output order (the caller keeps about `limit`; a few
    more are scanned so it can drop one, e.g. a command's own echo): the notes its excerpt carries
    (a spilled output), else the notable lines of the whole text; only those scoring at least
    `share` of the best, so a clear standout (a warning with a novel key) does not bring a page's
    ordinary one-off fields (`"limit": 720`) along. Raw lines: the caller redacts."""
    scored = [(fact, note_weight(fact)) for fact in noted_facts(text)]
    if not scored:
        scored = [(line.text, line.score) for line in notable_lines(text, limit + 1)]
    best = max((score for _, score in scored), default=0)
    return [fact for fact, score in scored if score >= best * share]
