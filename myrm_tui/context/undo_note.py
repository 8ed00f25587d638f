"""The note that tells the model, and every later summary, which files an undo put back.

Why: `/undo`, `/rewind` and `myrm undo` change files behind the model's back. Without a word, the
next turn still believes its writes stand, and every summary of the history (which lists the files
modified from the tool calls) keeps saying the undone file was modified. The agent adds this note
to the next user message as a part of its own, like an attached file: not what the person typed
(the transcript shows only their words), and in a fixed shape that `span_facts` reads back.

Only the agent writes a note: a part of the person's message (or of a repository's custom command
it expanded) that has the note's shape is defused before it is stored (`defused`), so a hostile
text cannot make a summary say that a file it wrote was undone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

UNDONE = "undone"
_OPEN = "<files_undone>"
_CLOSE = "</files_undone>"
_NOTE = re.compile(r"\A<files_undone>\n(?P<body>.*)\n</files_undone>\Z", re.DOTALL)


def undo_note(paths: Iterable[str], turns: Iterable[int]) -> str:
    """The note's text: one JSON list of paths, so a path with any character reads back whole."""
    names = list(dict.fromkeys(paths))
    numbers = sorted(set(turns))
    said = (
        "The user undid the file changes of earlier turns since your last reply: these files are back "
        "to what they were before those turns (or removed, if a turn created them). Read a file again "
        "before you rely on its content."
    )
    body = json.dumps({"paths": names, "turns": numbers}, ensure_ascii=False)
    return f"{_OPEN}\n{said}\n{body}\n{_CLOSE}"


def undone_paths(text: str) -> tuple[str, ...] | None:
    """The paths of a note's text, or None when `text` is not a note."""
    match = _NOTE.match(text)
    if match is None:
        return None
    try:
        data = json.loads(match["body"].rsplit("\n", 1)[-1])
    except ValueError:
        return None
    paths = data.get("paths") if isinstance(data, dict) else None
    return tuple(p for p in paths if isinstance(p, str)) if isinstance(paths, list) else None


def is_note_part(part: Mapping[str, Any]) -> bool:
    return part.get("type") == "text" and undone_paths(str(part.get("text", ""))) is not None


def undone_in(message: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths a user message's notes name (empty for any other message)."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return ()
    found: list[str] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            paths = undone_paths(str(part.get("text", "")))
            if paths:
                found.extend(paths)
    return tuple(dict.fromkeys(found))


def without_notes(content: str | Sequence[Any]) -> str | list[Any]:
    """`content` with its note parts left out (what the person typed, and what they attached)."""
    if isinstance(content, str):
        return content
    return [p for p in content if not (isinstance(p, dict) and is_note_part(p))]


def defused(content: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """`content` as typed, with any part shaped like a note made not to read as one (a space in
    front: the model still sees the text, `undone_paths` no longer takes it)."""
    if isinstance(content, str):
        return content
    return [{**p, "text": " " + str(p.get("text", ""))} if is_note_part(p) else p for p in content]
