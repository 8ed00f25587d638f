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
from collections import Counter
from collections.abc import Iterator
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


def _scored(lines: list[str]) -> Iterator[NotableLine]:
    per_line = [_keys(line) for line in lines]
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


def notable_lines(text: str, limit: int, *, skip_head: int = 0, skip_tail: int = 0) -> list[NotableLine]:
    """Up to `limit` lines of `text` that break its pattern, best first, then in output order.
    `skip_head`/`skip_tail` (characters) leave out what an excerpt already shows."""
    if limit <= 0 or not text:
        return []
    scanned = text[:SCAN_CHARS]
    lines = scanned.split("\n")
    found = list(_scored(lines))
    if skip_head or skip_tail:
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


# How an excerpt shows a notable line (`… line 153: WARN override applied port=4821 …`): one
# format, so a summary made later from the excerpt alone (the whole output is in the vault)
# still finds the fact — in a short excerpt nothing is "repetitive" enough to be found again.
_NOTE = re.compile("^" + re.escape(MARKER_OPEN) + r"line \d+: (.+)" + re.escape(MARKER_CLOSE) + "$")


def note_line(found: NotableLine) -> str:
    return marker(f"line {found.index + 1}: {found.text}")


def noted_facts(text: str) -> list[str]:
    """The notable lines an excerpt carries as notes (see `note_line`), in order."""
    return [m.group(1) for m in map(_NOTE.match, text.split("\n")) if m]
