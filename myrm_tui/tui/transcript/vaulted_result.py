"""What a vaulted-result card says about a stored result whose whole text went to the vault (pure).

Why parse the stored text: the result row is the one record every path shares (a live turn, a
reopened session, a subagent's distilled answer), and its first lines already name what the model
was given (the spill marker, or the subagent's hint line). Reading them back means the card shows
exactly what the model saw, never a second opinion about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Lines of the model's excerpt the card previews: enough to recognise the output at a glance,
# few enough that a transcript of spilled calls still reads as a list.
CARD_HEAD_LINES = 4
# A tool result's spill marker (context/rows/ingest.py spill_marker) and the model-summary variant
# (agent/turn/arrival_summary.py): size, lines, what the model got, handle, the recovery hint.
_TOOL_MARKER = re.compile(
    r"^\[output (?P<chars>[\d,]+) chars, (?P<lines>[\d,]+) lines → (?P<tier>.*?) shown · "
    r"full: (?P<handle>vault://[0-9a-f]+) · (?P<hint>.*)\]$"
)
# A subagent's distilled answer (agent/subagent/result.py): its hint line and the omitted middle.
_SUBAGENT_HINT = re.compile(r"^full result: (?P<handle>vault://[0-9a-f]+) · (?P<hint>.*)$", re.MULTILINE)
_OMITTED = re.compile(r"\n\[… (?P<chars>[\d,]+) chars omitted · [^\n]*…\]\n")
_SUBAGENT_RESULT_HEADING = "\nresult:\n"


@dataclass(frozen=True)
class VaultedResult:
    handle: str  # the vault handle of the whole text
    total_chars: int  # the whole text's size
    total_lines: int | None  # its lines, when the stored text says
    tier: str  # what the model got instead of the whole text
    head: str  # the first lines of what the model got
    hint: str  # the recovery hint the model was given, verbatim


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _head(text: str) -> str:
    return "\n".join(text.strip("\n").splitlines()[:CARD_HEAD_LINES])


def vaulted_result(content: str) -> VaultedResult | None:
    """The card's facts about a stored result, or None when nothing of it went to the vault."""
    first, _, rest = content.partition("\n")
    found = _TOOL_MARKER.match(first)
    if found is not None:
        return VaultedResult(
            found["handle"],
            _number(found["chars"]),
            _number(found["lines"]),
            found["tier"],
            _head(rest),
            found["hint"],
        )
    if not content.startswith("[subagent "):
        return None
    hint = _SUBAGENT_HINT.search(content)
    if hint is None:
        return None
    _, _, raw = content.partition(_SUBAGENT_RESULT_HEADING)
    omitted = _OMITTED.search(raw)
    total = len(raw) + (_number(omitted["chars"]) - len(omitted[0]) if omitted else 0)
    return VaultedResult(hint["handle"], total, None, "subagent answer: head and tail", _head(raw), hint["hint"])
