"""What a finished tool block shows of its result (pure; no Textual).

Why not a plain head of the stored text: a big output is stored as an excerpt under a spill
marker, so "N more characters" counted from the stored text undercounts by the whole vault
part. The count here is of the real output (the marker names its size), and the handle of the
whole is kept so a key can open it (screens/tool_output.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolPreview:
    text: str  # the head shown in the block (raw; the widget sanitises it)
    total_chars: int  # the real output's length, vault part included
    more_chars: int  # total_chars minus what the block shows
    handle: str | None  # vault handle of the whole output, when it was spilled


def tool_preview(content: str, limit: int, handle: str | None = None) -> ToolPreview:
    """The block's preview of `content` (the stored result) in at most `limit` characters."""
    # imported on use: context.ingest brings the output filters (~50 ms), which the first frame
    # of a new session never needs
    from myrm_tui.context.rows.ingest import spilled_output

    spilled = spilled_output(content)
    total = len(content)
    if spilled is not None:
        total = max(total, spilled[0])
        handle = handle or spilled[1]
    head = content[:limit]
    return ToolPreview(head, total, max(0, total - len(head)), handle)


def preview_text(preview: ToolPreview, open_key: str = "") -> str:
    """The block's output text: the head, how much more there is, where, and the key that shows it."""
    lines = [preview.text]
    if preview.more_chars:
        lines.append(f"… {preview.more_chars:,} more characters")
    if preview.handle:
        lines.append(f"full output: {preview.handle}")
    if open_key and len(lines) > 1:
        lines[-1] += f" · {open_key} opens it"
    return "\n".join(lines)
