"""What actually happened in a span of history: each call's outcome and each ask's fate.

Why: a summary written without a model used to list every tool call under "Done", every path
a call named under "Files modified" and every ask but the last under "Pending user asks". A
fork of a session where the user denied `rm -rf build` and interrupted a loop then told the
next model both had happened. Here a call is paired with its stored result and the outcome the
agent stored (store/tool_status.py); an ask is answered when a final assistant reply (text, no
tool calls, not cut off) follows it before the next ask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import parse_arguments
from myrm_tui.context.undo_note import UNDONE, undone_in, without_notes
from myrm_tui.store.tool_status import DENIED, INTERRUPTED, OK, UNKNOWN, stored_status

# Tools whose successful call changes the file named by their `path` argument.
WRITE_TOOLS = {"file_write": "write", "file_edit": "edit"}
# The agent's note on a reply that was cut off (agent.CUT_OFF_NOTE): such a reply is no answer.
CUT_OFF_MARK = "[answer cut off:"

ANSWERED, UNANSWERED, OPEN = "answered", "unanswered", "open"


@dataclass(frozen=True)
class CallFact:
    index: int  # of the assistant message that made the call, in the span
    call_id: str
    name: str
    arguments: dict[str, Any]
    status: str  # ok, error, timeout, denied, interrupted; unknown: no result in the span
    result_index: int | None = None
    result_text: str = ""

    @property
    def ran(self) -> bool:
        """The call's effect can be assumed (it finished, even with a failure exit)."""
        return self.status not in (DENIED, INTERRUPTED, UNKNOWN)


@dataclass(frozen=True)
class AskFact:
    index: int
    text: str
    fate: str  # answered; unanswered (the next ask, or the end of a finished span, came first); open
    answer_index: int | None = None


@dataclass(frozen=True)
class SpanFacts:
    asks: tuple[AskFact, ...]
    calls: tuple[CallFact, ...]
    answers: tuple[int, ...]  # indexes of final assistant replies
    # (index of the user message, paths) for each undo note (context/undo_note.py)
    undone: tuple[tuple[int, tuple[str, ...]], ...] = ()

    def files_modified(self) -> dict[str, str]:
        """path → the last successful write op, or "undone" when an undo put the file back after
        it: a denied, failed or interrupted write, and any read, leave a file unmodified."""
        steps: list[tuple[int, str, str]] = []
        for call in self.calls:
            op = WRITE_TOOLS.get(call.name)
            path = call.arguments.get("path")
            if op and call.status == OK and isinstance(path, str) and path:
                steps.append((call.index, path, op))
        steps += [(index, path, UNDONE) for index, paths in self.undone for path in paths]
        files: dict[str, str] = {}
        for _index, path, op in sorted(steps, key=lambda step: step[0]):  # stable: calls keep their order
            if op == UNDONE and path not in files:
                continue  # put back a file this span never wrote: nothing it says is undone
            files.pop(path, None)  # re-inserted: the order is "last modified"
            files[path] = op
        return files

    def call_status(self) -> dict[str, str]:
        return {c.call_id: c.status for c in self.calls}


def _first_results(messages: Sequence[dict[str, Any]]) -> dict[str, tuple[int, dict[str, Any]]]:
    """Each call id's first tool result in `messages`: (index, message)."""
    results: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, message in enumerate(messages):
        if message.get("role") == "tool":
            results.setdefault(str(message.get("tool_call_id") or ""), (i, message))
    return results


def call_statuses(messages: Sequence[dict[str, Any]]) -> dict[str, str]:
    """`span_facts(messages).call_status()` without the rest of the span's facts: a leaf's
    footer needs only each call's outcome, and the asks, arguments and result texts were half
    of what building a footer cost inside the compaction event (benchmark B1). A later call
    reusing an id wins, as in `call_status`; a result must come after its call."""
    results = _first_results(messages)
    out: dict[str, str] = {}
    for i, message in enumerate(messages):
        for raw in message.get("tool_calls") or ():
            call_id = str(raw.get("id") or "")
            found = results.get(call_id)
            out[call_id] = stored_status(found[1]) if found is not None and found[0] > i else UNKNOWN
    return out


def is_final_answer(message: dict[str, Any]) -> bool:
    if message.get("role") != "assistant" or message.get("tool_calls"):
        return False
    text = compaction_text(message).strip()
    return bool(text) and CUT_OFF_MARK not in text[-200:]


def span_facts(messages: Sequence[dict[str, Any]], *, ends_turn: bool = False) -> SpanFacts:
    """Facts of `messages` (provider dicts, in order). `ends_turn`: the span is followed by a new
    user message (a fork's summarized middle), so an ask without a reply in it was never answered;
    otherwise the newest such ask is `open` (its turn may go on after the span)."""
    results = _first_results(messages)
    calls: list[CallFact] = []
    answers: list[int] = []
    asks: list[AskFact] = []
    pending: tuple[int, str] | None = None  # the newest ask not yet answered

    def close(fate: str, answer: int | None = None) -> None:
        nonlocal pending
        if pending is not None:
            asks.append(AskFact(pending[0], pending[1], fate, answer))
            pending = None

    undone: list[tuple[int, tuple[str, ...]]] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "user":
            paths = undone_in(message)
            if paths:
                undone.append((i, paths))
                message = {**message, "content": without_notes(message.get("content") or "")}
            text = compaction_text(message).strip()
            if text:
                close(UNANSWERED)
                pending = (i, text)
        elif is_final_answer(message):
            answers.append(i)
            close(ANSWERED, i)
        for raw in message.get("tool_calls") or ():
            function = raw.get("function") or {}
            call_id = str(raw.get("id") or "")
            found = results.get(call_id)
            status, result_index, result_text = UNKNOWN, None, ""
            if found is not None and found[0] > i:
                result_index, result = found
                status, result_text = stored_status(result), compaction_text(result)
            calls.append(
                CallFact(
                    i,
                    call_id,
                    str(function.get("name", "")),
                    parse_arguments(function.get("arguments")),
                    status,
                    result_index,
                    result_text,
                )
            )
    close(UNANSWERED if ends_turn else OPEN)
    return SpanFacts(tuple(asks), tuple(calls), tuple(answers), tuple(undone))
