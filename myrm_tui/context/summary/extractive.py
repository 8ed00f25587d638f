"""The summary written without a model: the floor every escalation ends on.

Why it exists: the session must never lose history or stall because a summarizer is down,
rate-limited, too small or keeps writing garbage. Everything here is copied from the messages
(user asks verbatim, files, commands, errors, last actions), so it cannot hallucinate; it is
marked `fallback=True` and its header says so.

Invariant (tested): its body is strictly smaller than the messages it replaces, measured with
the auditor's token count; when even a minimal one is not, the minimal one is returned and the
caller keeps the messages (a summary that saves nothing is not applied).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from myrm_tui.context.intent import _text_of, looks_failed
from myrm_tui.context.summary.footer import build_footer
from myrm_tui.context.summary.schema import FileChange, StructuredSummary, body_text
from myrm_tui.context.views import msg_handle, parse_arguments, tool_identity

# Caps of the full extract; each shrink step below halves the lists and the text lengths.
GOAL_CHARS = 300
ASK_CHARS = 500
LIST_ITEM_CHARS = 160
MAX_ASKS = 5
MAX_ACTIONS = 10
MAX_ERRORS = 5
MAX_FILES = 15
SHRINK_STEPS = 4
NO_ASK = "(no user request in this span)"


def _cap(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _verbatim(text: str, n: int) -> str:
    """The user's words as written (line breaks kept), only cut at the cap."""
    text = text.strip()
    return text if len(text) <= n else text[:n - 1] + "…"


def _facts(messages: Sequence[dict[str, Any]], ids: Sequence[int] | None):
    asks: list[str] = []
    actions: list[str] = []
    errors: list[str] = []
    for i, message in enumerate(messages):
        handle = f" ({msg_handle(ids[i])})" if ids is not None else ""
        role = message.get("role")
        text = _text_of(message).strip()
        if role == "user" and text:
            asks.append(text)
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            name = str(function.get("name", ""))
            identity = tool_identity(name, parse_arguments(function.get("arguments")))
            actions.append(f"{name} {identity}".strip() + handle)
        if role == "tool" and looks_failed(text):
            errors.append(text.split("\n", 1)[0].strip() + handle)
        if role == "assistant" and text and not message.get("tool_calls"):
            actions.append("answered: " + text.split("\n", 1)[0].strip() + handle)
    return asks, actions, errors


def _build(messages, ids, previous_goal: str, scale: int) -> StructuredSummary:
    asks, actions, errors = _facts(messages, ids)
    footer = build_footer(messages, ids)
    div = 2 ** scale
    item = max(40, LIST_ITEM_CHARS // div)
    goal_src = previous_goal or (asks[0] if asks else "")
    files = [FileChange(path, op) for path, op in footer.files.items()][-max(1, MAX_FILES // div):]
    return StructuredSummary(
        user_goal=_cap(goal_src, max(60, GOAL_CHARS // div)),
        active_task=_verbatim(asks[-1], max(80, ASK_CHARS // div)) if asks else NO_ASK,
        pending_user_asks=[_cap(a, item) for a in asks[:-1]][-max(1, MAX_ASKS // div):] if scale < 2 else [],
        completed_actions=[_cap(a, item) for a in actions][-max(1, MAX_ACTIONS // div):],
        errors_and_fixes=[_cap(e, item) for e in errors][-max(1, MAX_ERRORS // div):],
        files_modified=files,
        artifacts=[_cap(c, item) for c in footer.commands][: max(1, 8 // div)] if scale < 2 else [],
        fallback=True,
    )


def minimal_summary(messages: Sequence[dict[str, Any]], previous_goal: str = "") -> StructuredSummary:
    """The smallest honest summary: the goal and the last ask, cut short."""
    asks, _, _ = _facts(messages, None)
    return StructuredSummary(user_goal=_cap(previous_goal or (asks[0] if asks else ""), 60),
                             active_task=_verbatim(asks[-1], 60) if asks else "", fallback=True)


def extractive_summary(messages: Sequence[dict[str, Any]], *, ids: Sequence[int] | None = None,
                       source_tokens: int, previous_goal: str = "",
                       count: Callable[[str], int] | None = None) -> StructuredSummary:
    """A fallback summary strictly smaller than `source_tokens` when at all possible."""
    if count is None:
        from myrm_tui.context.tokens import count_text_tokens as count
    for scale in range(SHRINK_STEPS):
        summary = _build(messages, ids, previous_goal, scale)
        if count(body_text(summary)) < source_tokens:
            return summary
    summary = minimal_summary(messages, previous_goal)
    if count(body_text(summary)) < source_tokens:
        return summary
    return replace(summary, user_goal="", active_task="")
