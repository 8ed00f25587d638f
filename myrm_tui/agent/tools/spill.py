"""Big outputs go to the vault; the prompt gets a head, a tail and the handle to the rest.

Why head and tail: the head shows what ran, the tail how it ended (errors, summaries, exit
lines). The marker names the exact call that reads the rest, so nothing is lost to the model.
"""

from __future__ import annotations

from myrm_tui.agent.limits import SPILL_HEAD_RATIO
from myrm_tui.store.vault import Vault


def _cut_head(text: str, size: int) -> str:
    head = text[:size]
    newline = head.rfind("\n")
    # Prefer ending on a line boundary unless that throws away most of the head.
    return head[: newline + 1] if newline > size // 2 else head


def _cut_tail(text: str, size: int) -> str:
    if size <= 0:
        return ""
    tail = text[-size:]
    newline = tail.find("\n")
    return tail[newline + 1:] if 0 <= newline < size // 2 else tail


def spill_marker(total_chars: int, total_lines: int, handle: str, head_lines: int) -> str:
    next_line = head_lines + 1
    return (
        f"[output {total_chars:,} chars, {total_lines:,} lines → head and tail shown · full: {handle} · "
        f'file_read("{handle}", start_line={next_line}, end_line={min(total_lines, next_line + 199)})]'
    )


def spill_if_large(text: str, cap: int, vault: Vault | None) -> tuple[str, str | None]:
    """Return (inline text, vault handle or None). Without a vault the text is cut with a note
    (only in contexts with no store, e.g. a bare tool test)."""
    if len(text) <= cap:
        return text, None
    head = _cut_head(text, max(1, int(cap * SPILL_HEAD_RATIO)))
    tail = _cut_tail(text, cap - len(head))
    total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if vault is None:
        note = f"[output {len(text):,} chars → cut to head and tail; no vault available for the rest]"
        return f"{head}\n{note}\n{tail}", None
    handle = vault.put(text, suffix=".txt")
    marker = spill_marker(len(text), total_lines, handle, head.count("\n"))
    return f"{head.rstrip(chr(10))}\n{marker}\n{tail}", handle
