"""An approval's unified diff as the old and new text ACP's diff content carries.

Why from the diff and not from the file: the diff is what the tool's own preview computed through
the workspace fence (the same text the TUI shows); reopening the path here would read a file the
model's commands may be changing concurrently, and outside the fence's checks. So the texts are
the changed hunks with their context lines, not the whole file: a client renders them as the same
change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EditTexts:
    old_text: str | None  # None: the file is new (the diff's "before" side is empty)
    new_text: str


def edit_texts(diff: str) -> EditTexts:
    """Context lines go to both sides, `-` lines to the old, `+` lines to the new; hunks are
    joined in order (a line saying how many lines were hidden is dropped)."""
    old: list[str] = []
    new: list[str] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("--- ", "+++ ", "@@")) or line.startswith("… "):
            continue
        if line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
    return EditTexts("".join(old) if old else None, "".join(new))
