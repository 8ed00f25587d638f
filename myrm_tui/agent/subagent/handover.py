"""The structured handover a subagent ends with, parsed out of its final answer.

Why a separate, tolerant parser: the parent acts on "what is done, what is left, what is risky,
which files" far more than on the child's prose, and models format blocks loosely (a tag, a
fenced block, a markdown heading, bullets or commas). When no block is found the files are still
known: they are derived from the child's own tool calls, so the parent never gets nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# What the child is told to end with (part of its system prompt, see subagent.py).
HANDOVER_INSTRUCTIONS = (
    "End your final answer with a handover block, exactly in this shape:\n"
    "<handover>\n"
    "completed:\n- what you finished\n"
    "pending:\n- what is left undone\n"
    "risks:\n- what could be wrong or needs checking\n"
    "files:\n- path/of/a/relevant/file\n"
    "</handover>\n"
    "Write 'none' under a heading with nothing to say."
)

SECTIONS = ("completed", "pending", "risks", "files")
# Why so few: the handover is the part of the result the parent always sees in full; a child
# listing 200 files would push the rest out of the capped result.
MAX_ITEMS_PER_SECTION = 20
# Tool arguments that name files, by tool (the fallback when the child wrote no handover).
_PATH_ARGUMENTS = {"file_read": "path", "file_write": "path", "file_edit": "path", "grep": "path", "glob": "path"}

_TAGGED = re.compile(r"<handover>(?P<body>.*?)(?:</handover>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCED = re.compile(r"```[ \t]*handover[^\n]*\n(?P<body>.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}[ \t]*handover[ \t]*:?[ \t]*$(?P<body>.*)", re.DOTALL | re.IGNORECASE | re.MULTILINE)
_SECTION = re.compile(
    r"^[ \t>*_#-]*(?P<name>completed|done|pending|todo|risks?|files?)[*_ \t]*:[*_ \t]*(?P<rest>.*)$", re.IGNORECASE
)
_BULLET = re.compile(r"^[ \t]*(?:[-*•+]|\d+[.)])[ \t]+")
_NONE = {"none", "n/a", "-", "nothing", "(none)"}
_ALIASES = {"done": "completed", "todo": "pending", "risk": "risks", "file": "files"}


@dataclass(frozen=True)
class Handover:
    completed: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    found: bool = False  # False: the child wrote no block; `files` come from its tool calls

    def render(self) -> str:
        lines = ["handover" + ("" if self.found else " (the subagent wrote none; files from its tool calls)") + ":"]
        for name in SECTIONS:
            items = getattr(self, name)
            lines.append(f"  {name}: " + ("; ".join(items) if items else "none"))
        return "\n".join(lines)


def _items(inline: str, lines: list[str]) -> list[str]:
    """Items of one section: the text after its colon is a comma-separated list ("files: a.py,
    b.py"); each later line is one item (a bullet may itself contain commas)."""
    candidates = [part for part in inline.split(",")] + lines
    items = []
    for raw in candidates:
        item = _BULLET.sub("", raw).strip().strip("`").strip()
        if item and item.lower() not in _NONE:
            items.append(item)
    return items


def _parse_body(body: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    inline, lines = "", list[str]()

    def flush() -> None:
        if current is not None:
            sections.setdefault(current, []).extend(_items(inline, lines))

    for line in body.splitlines():
        match = _SECTION.match(line)
        if match:
            flush()
            name = match.group("name").lower()
            current, inline, lines = _ALIASES.get(name, name), match.group("rest"), []
        elif current is not None:
            lines.append(line)
    flush()
    return sections


def split_handover(text: str) -> tuple[str, str | None]:
    """(the answer without its handover block, the block's body or None). The last block wins:
    a child quoting the instructions earlier in its answer does not shadow its real handover."""
    for pattern in (_TAGGED, _FENCED, _HEADING):
        matches = list(pattern.finditer(text))
        if matches:
            last = matches[-1]
            return (text[: last.start()] + text[last.end() :]).strip(), last.group("body")
    return text.strip(), None


def files_from_calls(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[str, ...]:
    """Paths the child's tool calls named, first mention first, without duplicates."""
    seen: dict[str, None] = {}
    for name, arguments in calls:
        key = _PATH_ARGUMENTS.get(name)
        value = arguments.get(key) if key else None
        if isinstance(value, str) and value.strip():
            seen.setdefault(value.strip(), None)
    return tuple(seen)


def parse_handover(text: str, calls: Iterable[tuple[str, Mapping[str, Any]]] = ()) -> tuple[str, Handover]:
    """(the answer without the block, the handover). Files the block omits but the child's
    calls named are not added: the child's own list is its judgement of what is relevant."""
    rest, body = split_handover(text)
    if body is None:
        return rest, Handover(files=files_from_calls(calls)[:MAX_ITEMS_PER_SECTION])
    sections = _parse_body(body)
    fields = {name: tuple(sections.get(name, ())[:MAX_ITEMS_PER_SECTION]) for name in SECTIONS}
    if not fields["files"]:
        fields["files"] = files_from_calls(calls)[:MAX_ITEMS_PER_SECTION]
    return rest, Handover(**fields, found=True)
