"""Prompts of the summarizer: depth-aware instructions, incremental merge, focus, retries.

Why the transcript goes in one user message (not replayed as chat turns): the summarizer may be
a different model than the one that produced the history, its provider may reject foreign tool
call formats, and a single text block is what the chunk cap measured. Message handles are kept
in the transcript so the model can cite them and the footer's handles line up.

Why retries continue the conversation (assistant = rejected answer, user = auditor feedback):
the model sees exactly what was wrong with its own output, and the request stays stateless, so a
scripted provider answers attempt N with its turn N.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import msg_handle
from myrm_tui.context.summary.schema import FIELD_CAPS, StructuredSummary

# Per-message cap of the terse attempt: one huge tool output must not sink the last LLM try.
TERSE_MESSAGE_CHARS = 2_000
# Tool-call arguments beyond this are cut in the transcript (file contents being written).
ARGUMENT_CHARS = 600
FOCUS_SHARE = "60-70%"

_FIELDS = f"""Return ONE JSON object with these keys (English keys; values in the user's language):
- "user_goal": the user's overall goal, one sentence.
- "active_task": the user's latest request that is not yet fulfilled, copied word for word \
(a question counts as a request; "stop", "undo" or a new topic replaces earlier work).
- "completed_actions": list, what was done and its result (tool + outcome), at most {FIELD_CAPS["completed_actions"]}.
- "key_findings": list of facts learned, each under 50 words, at most {FIELD_CAPS["key_findings"]}.
- "errors_and_fixes": list of "error -> fix" (or "-> unresolved"), at most {FIELD_CAPS["errors_and_fixes"]}.
- "files_modified": list of {{"path": "...", "change": "what changed and why"}}.
- "decisions": list of choices made and their reason, at most {FIELD_CAPS["decisions"]}.
- "constraints_and_preferences": list of rules the user set, at most {FIELD_CAPS["constraints_and_preferences"]}.
- "resolved_questions": list of questions answered, with the answer, at most {FIELD_CAPS["resolved_questions"]}.
- "pending_user_asks": list of user requests still open, at most {FIELD_CAPS["pending_user_asks"]}.
- "active_state": one line: git branch, test status, running processes, if known.
- "artifacts": list of outputs produced (reports, commits, URLs, handles like vault://...).
- "blocked_items": list of what blocks progress right now, at most {FIELD_CAPS["blocked_items"]}.
- "next_steps": list of concrete next actions, at most {FIELD_CAPS["next_steps"]}.
- "narrative": string (see the style below; may be empty at the leaf level).
Use [] or "" for anything the history does not show. Never invent facts."""

_IDENTIFIERS = (
    "Copy identifiers exactly as written: file paths, function and class names, "
    "commands, UUIDs, commit hashes, URLs, error codes and messages, environment "
    "variable names, hosts and ports. Cite message handles (msg:ID) for important facts."
)

_STYLE = {
    0: (
        "You compress part of a coding-agent conversation into extractive notes. Put each fact "
        "into the right field; prefer the exact words of the conversation over paraphrase."
    ),
    1: (
        'You fold several earlier summaries into one. Write "narrative" as a chronological '
        "timeline, one line per step, oldest first. When a later step reversed an earlier "
        "decision, keep the earlier line but start it with [SUPERSEDED]. Keep outcomes, paths and "
        "open questions."
    ),
    2: (
        'You fold several timelines into one trajectory. Write "narrative" as: the overall '
        "goal, the key decisions that still hold, and the state reached. Drop per-step minutiae "
        "(single tool calls, retries, superseded decisions)."
    ),
    3: (
        'You fold long-range summaries into durable memory. Write "narrative" as ONE dense '
        "factual paragraph: milestones reached, architectural decisions, constraints that will "
        "still matter later. Leave the list fields short."
    ),
}
# A fold is where stale state would otherwise pile up: each child lists the blockers and next
# steps of its own moment, and the newer children say which of those were since settled.
_FOLD_RULES = (
    "The summaries are in order, oldest first. blocked_items: keep the open blockers of "
    "every summary, and drop each one a later summary shows resolved. next_steps: drop each "
    "step a later summary shows done; keep the rest, newest first. active_task and "
    "active_state come from the newest summary."
)
_TERSE = "Be as terse as possible while keeping every load-bearing fact and identifier."
_JSON_ONLY = "Answer with the JSON object only: no prose, no code fence."


def style_for(depth: int) -> str:
    return _STYLE[min(max(depth, 0), 3)]


def system_prompt(depth: int, *, focus: str | None = None, terse: bool = False, merge: bool = False) -> str:
    parts = [style_for(depth), _IDENTIFIERS, _FIELDS]
    if merge:
        parts.append(
            "You are UPDATING an existing summary with newer history. Keep everything in it that "
            "is still true; add the new facts; when new history changes a fact, replace the old "
            "value; move answered asks to resolved_questions; remove blocked_items that are "
            "resolved and next_steps that are done; set active_task from the newest user request. "
            "Respect the list limits by merging or dropping the least important old items."
        )
    if depth >= 1 and not merge:
        parts.append(_FOLD_RULES)
    if focus:
        parts.append(
            f'FOCUS: spend about {FOCUS_SHARE} of the summary on "{focus}"; keep the other fields brief but present.'
        )
    if terse:
        parts.append(_TERSE)
    parts.append(_JSON_ONLY)
    return "\n\n".join(parts)


def _cut(text: str, cap: int | None) -> str:
    if cap is None or len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[… {len(text) - cap} chars cut …]\n{text[-half:]}"


def transcript(
    messages: Sequence[dict[str, Any]], ids: Sequence[int] | None = None, *, per_message_cap: int | None = None
) -> str:
    """The messages as a plain-text transcript, one block per message, handles first."""
    blocks: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role", "?")
        handle = msg_handle(ids[i]) if ids is not None else f"#{i + 1}"
        label = f"[{handle} {role}" + (f" result of {message['tool_call_id']}" if message.get("tool_call_id") else "")
        lines = [label + "]"]
        text = compaction_text(message).strip()
        if text:
            lines.append(_cut(text, per_message_cap))
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            args = function.get("arguments")
            args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            lines.append(f"→ call {function.get('name', '')} ({call.get('id', '')}): {_cut(args, ARGUMENT_CHARS)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def build_prompt(
    messages: Sequence[dict[str, Any]],
    *,
    depth: int,
    ids: Sequence[int] | None = None,
    previous: StructuredSummary | None = None,
    focus: str | None = None,
    terse: bool = False,
) -> list[dict[str, str]]:
    """The first request of an escalation: system instructions + one user message."""
    cap = TERSE_MESSAGE_CHARS if terse else None
    body = transcript(messages, ids, per_message_cap=cap)
    parts: list[str] = []
    if previous is not None:
        parts.append("EXISTING SUMMARY (update it):\n" + previous.to_json())
        parts.append("NEWER HISTORY:\n" + body)
    else:
        what = "HISTORY TO SUMMARIZE" if depth == 0 else "SUMMARIES TO FOLD (oldest first)"
        parts.append(f"{what}:\n{body}")
    parts.append(_JSON_ONLY)
    return [
        {"role": "system", "content": system_prompt(depth, focus=focus, terse=terse, merge=previous is not None)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def retry_turns(rejected_answer: str, feedback: str, *, terse: bool = False) -> list[dict[str, str]]:
    """Appended after a rejected answer: the answer itself and what to fix."""
    text = feedback + ("\n\n" + _TERSE if terse else "") + "\n\n" + _JSON_ONLY
    return [{"role": "assistant", "content": rejected_answer or "(empty answer)"}, {"role": "user", "content": text}]


def condense_messages(child_texts: Sequence[str]) -> list[dict[str, str]]:
    """Child summaries (rendered, oldest first) as the one pseudo message a condense call summarizes."""
    return [{"role": "user", "content": "\n\n---\n\n".join(child_texts)}]
