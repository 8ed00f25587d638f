"""Stored messages → what a resumed transcript shows (pure; no Textual).

The store keeps provider messages exactly; the transcript wants user bubbles, replies and one
block per tool call with its result. Pairing results to calls by id happens here so widgets
never see raw provider dicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.rows.views import UNTRUSTED_CLOSE, UNTRUSTED_OPEN
from myrm_tui.store.records import MessageRecord
from myrm_tui.store.tool_status import stored_status
from myrm_tui.tui.formatting import message_text


@dataclass
class UserItem:
    text: str


@dataclass
class AssistantItem:
    text: str
    reasoning: str = ""
    # The stored row (its reply figures are keyed by it); not part of what the item shows.
    message_id: int | None = field(default=None, compare=False)


@dataclass
class ToolItem:
    call_id: str
    name: str
    arguments: dict[str, Any] | str
    content: str | None = None  # None: the call has no stored result
    status: str = "pending"


@dataclass
class ContextNoteItem:
    """A summary or context note stored as a user-role message: shown as its own block, never as
    something the user typed (its wrapper tags and header are unwrapped into `title`)."""

    title: str
    body: str
    covered: int | None = None  # messages the summary stands for, when its header says


HistoryItem = UserItem | AssistantItem | ToolItem | ContextNoteItem

# The header a summary's renderer writes (context/summary/schema.header_text).
_SUMMARY_HEADER = re.compile(r"^\[summary (?P<handle>.+?) · depth=\d+ · covers (?P<count>\d+) messages(?P<rest>.*)\]$")
# A fork summary from before summaries were marked: the exact shape agent/fork.py wrote.
_LEGACY_FORK_SUMMARY = UNTRUSTED_OPEN + "\n[summary parent "


@dataclass
class History:
    items: list[HistoryItem] = field(default_factory=list)
    hidden: int = 0  # items left out of the tail


def _tool_calls(message: dict[str, Any]) -> Iterable[tuple[str, str, Any]]:
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        yield str(call.get("id", "")), str(function.get("name", "?")), function.get("arguments", "")


def result_status(message: dict[str, Any]) -> str:
    """Status of a stored tool result (the stored outcome; old rows: the agent's wording)."""
    return stored_status(message)


def context_note(message: dict[str, Any]) -> ContextNoteItem | None:
    """The block for a user-role message that is really a summary, else None."""
    # imported on use: agent.fork brings the summarizer (~30 ms) the first frame does not need
    from myrm_tui.agent.fork import is_fork_summary

    text = message_text(message.get("content"))
    if not (is_fork_summary(message) or text.startswith(_LEGACY_FORK_SUMMARY)):
        return None
    lines = text.strip().splitlines()
    if lines and lines[0] == UNTRUSTED_OPEN:
        lines = lines[1:]
    if lines and lines[-1] == UNTRUSTED_CLOSE:
        lines = lines[:-1]
    covered = None
    title = "Summary of earlier messages"
    if lines:
        header = _SUMMARY_HEADER.match(lines[0])
        if header is not None:
            covered = int(header["count"])
            written = "written without a model" if "fallback=extractive" in header["rest"] else "written by a model"
            title = f"Summary of {covered} earlier messages · {written} · what the model reads instead of them"
            lines = lines[1:]
    return ContextNoteItem(title, "\n".join(lines), covered)


def build_history(records: Iterable[MessageRecord], tail: int | None = None) -> History:
    items: list[HistoryItem] = []
    calls: dict[str, ToolItem] = {}
    for record in records:
        message = record.message
        role = message.get("role", record.role)
        if role == "user":
            note = context_note(message)
            if note is not None:
                items.append(note)
                continue
            if message.get("myrm_synthetic") or message.get("synthetic"):
                continue
            items.append(UserItem(message_text(message.get("content"))))
        elif role == "assistant":
            text = message_text(message.get("content"))
            reasoning = str(message.get("reasoning_content") or "")
            if text or reasoning:
                items.append(AssistantItem(text, reasoning, record.id))
            for call_id, name, arguments in _tool_calls(message):
                item = ToolItem(call_id, name, arguments)
                calls[call_id] = item
                items.append(item)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or record.tool_call_id or "")
            known = calls.get(call_id)
            if known is None:  # an orphan result: show it rather than drop it
                known = ToolItem(call_id, str(message.get("name", "tool")), {})
                items.append(known)
            item = known
            item.content = message_text(message.get("content"))
            item.status = result_status(message)
        # system and other roles are engine plumbing, not conversation
    if tail is not None and len(items) > tail:
        return History(items[-tail:], hidden=len(items) - tail)
    return History(items)


def turns_of(items: list[HistoryItem]) -> list[list[HistoryItem]]:
    """Items grouped by turn: each turn starts at a user message (a leading group without one,
    e.g. a fork of a session that began oddly, is its own turn)."""
    turns: list[list[HistoryItem]] = []
    for item in items:
        if isinstance(item, UserItem) or not turns:
            turns.append([])
        turns[-1].append(item)
    return turns


def user_times(records: Iterable[MessageRecord]) -> list[float]:
    """Creation time of each user message the transcript shows, in order (turn starts)."""
    return [
        r.created_at
        for r in records
        if r.message.get("role", r.role) == "user"
        and not (r.message.get("myrm_synthetic") or r.message.get("synthetic"))
        and context_note(r.message) is None
    ]


def turn_after(starts: list[float], at: float) -> int:
    """Index of the first turn that started after `at` (where a divider for an event at `at`
    goes: before that turn)."""
    return sum(1 for start in starts if start <= at)
