"""What happens to a message before it is stored: huge text to the vault, images to the vault.

Why at ingestion: a 1 MB tool output or a base64 screenshot must never be tokenised or copied
on every turn. The stored row keeps a real excerpt (smart filter) plus the vault handle of the
full content, so the log stays lossless and small. The agent and `myrm replay` share this path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from myrm_tui.context.filters import filter_output
from myrm_tui.context.rows.media import offload_images
from myrm_tui.settings.sections.output_filters import FilterSpec
from myrm_tui.store.vault import Vault


def spill_marker(original_chars: int, original_lines: int, handle: str, kind: str) -> str:
    return (
        f"[output {original_chars:,} chars, {original_lines:,} lines → {kind} excerpt shown · full: {handle} · "
        f'file_read("{handle}", start_line=1, end_line=200) or ctx_expand("{handle}", query="…")]'
    )


# The marker's own shape, read back by whoever shows a stored result (the TUI's tool block):
# the real size and the handle of the whole, which the excerpt below the marker is not.
_MARKER = re.compile(r"^\[output (?P<chars>[\d,]+) chars, [\d,]+ lines → .*? · full: (?P<handle>vault://[0-9a-f]+) ·")


def spilled_output(text: str) -> tuple[int, str] | None:
    """(characters of the whole output, its vault handle) when `text` starts with a spill marker."""
    found = _MARKER.match(text)
    if found is None:
        return None
    return int(found["chars"].replace(",", "")), found["handle"]


def spill_text(
    content: str,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    cap_chars: int,
    vault: Vault | None,
    filters: Sequence[FilterSpec] = (),
) -> tuple[str, str | None]:
    """(text to store, vault handle or None). Above `cap_chars` the full text goes to the vault
    and the stored text is a smart-filter excerpt headed by the handle; `filters`: the session's
    declarative output filters (none: the shipped ones only, as `myrm replay` spills)."""
    if len(content) <= cap_chars:
        return content, None
    result = filter_output(
        content, tool=tool, arguments=arguments, budget_chars=max(200, cap_chars - 400), filters=filters
    )
    assert result is not None  # content is over the budget, so the filter always answers
    if vault is None:
        note = f"[output {len(content):,} chars → {result.kind} excerpt; no vault available for the rest]"
        return f"{note}\n{result.text}", None
    handle = vault.put(content, suffix=".txt")
    return f"{spill_marker(len(content), result.original_lines, handle, result.kind)}\n{result.text}", handle


def _tool_call_context(
    history_calls: Mapping[str, tuple[str, dict[str, Any]]], call_id: str
) -> tuple[str, dict[str, Any]]:
    return history_calls.get(call_id, ("", {}))


def ingest_message(
    message: dict[str, Any],
    vault: Vault | None,
    *,
    cap_chars: int,
    calls: Mapping[str, tuple[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The row to store for `message`. `calls` maps tool_call_id → (tool name, arguments) of
    earlier assistant calls so a tool result is filtered with its command in mind."""
    out = offload_images(message, vault) if vault is not None else message
    content = out.get("content")
    if isinstance(content, str) and len(content) > cap_chars:
        tool = ""
        arguments: dict[str, Any] = {}
        if out.get("role") == "tool":
            tool, arguments = _tool_call_context(calls or {}, out.get("tool_call_id", ""))
            tool = tool or out.get("name", "")
        text, _ = spill_text(content, tool=tool, arguments=arguments, cap_chars=cap_chars, vault=vault)
        out = dict(out)
        out["content"] = text
    return out
