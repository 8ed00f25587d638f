"""The summary written without a model: the floor every escalation ends on.

Why it exists: the session must never lose history or stall because a summarizer is down,
rate-limited, too small or keeps writing garbage. Everything here is copied from the messages
(user asks verbatim, files, commands, errors, last actions), so it cannot hallucinate; it is
marked `fallback=True` and its header says so. Only what happened is called done: a denied,
interrupted or unanswered call is "Blocked", a file is "modified" after a successful write, and
an ask is "pending" only when no reply followed it (`outcomes.py`).

Invariant (tested): its body is strictly smaller than the messages it replaces, measured with
the auditor's token count; when even a minimal one is not, the minimal one is returned and the
caller keeps the messages (a summary that saves nothing is not applied).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from myrm_tui.context.filters.notable import standout_facts, stated_values
from myrm_tui.context.observations.fact_context import KeptLines
from myrm_tui.context.observations.intent import compaction_text, looks_failed
from myrm_tui.context.rows.views import msg_handle, tool_identity
from myrm_tui.context.summary.outcomes import ANSWERED, UNANSWERED, WRITE_TOOLS, CallFact, span_facts
from myrm_tui.context.summary.schema import FileChange, StructuredSummary, body_text
from myrm_tui.context.undo_note import UNDONE
from myrm_tui.sinks import SCAN_CHARS, SUMMARY_BODY, scrub
from myrm_tui.store.tool_status import DENIED, INTERRUPTED, OK, UNKNOWN

# Caps of the full extract; each shrink step below halves the lists and the text lengths.
GOAL_CHARS = 300
ASK_CHARS = 500
LIST_ITEM_CHARS = 160
MAX_ASKS = 5
MAX_ACTIONS = 10
MAX_ERRORS = 5
MAX_FILES = 15
MAX_BLOCKED = 5  # denied/interrupted calls: few per span, and each one matters
# One-off facts from the middle of long outputs (`notable.py`): a few per output, a handful per
# span; more would turn the summary into a second excerpt of the logs.
FINDINGS_PER_OUTPUT = 3
MAX_FINDINGS = 12
# Decisions the conversation wrote down as such ("Decision: keep the v2 API because …"): the
# facts a later turn most often needs and a first-line excerpt of the reply never shows.
MAX_DECISIONS = 5
_DECISION = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:decision|decided|we decided|i decided|we(?:'ll| will) (?:keep|use|go with)"
    r"|going with|chosen approach)\b",
    re.IGNORECASE,
)
# Values the user stated in passing (`notable.stated_values`), kept as standing facts of the
# session: a few per span, each one sentence.
MAX_STATED = 3
STATED_CHARS = 200
MAX_COMMAND_CHARS = 60  # a command's first line, as the footer shows it
# A successful one-line edit of a settings file, up to this long, is kept as the file's new value
# ("now: port=5000"): a changed setting is the fact a later turn asks for, and the re-read that
# showed it is gone once summarized. Code edits are not: the file holds them, and their lines
# would crowd the capped file list of a fold.
EDIT_VALUE_CHARS = 100
EDIT_TOOLS = ("file_edit",)
SETTINGS_SUFFIXES = (".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".env", ".properties", ".json")
SHRINK_STEPS = 4
NO_ASK = "(no user request in this span)"


def _cap(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _verbatim(text: str, n: int) -> str:
    """The user's words as written (line breaks kept), only cut at the cap."""
    text = text.strip()
    return text if len(text) <= n else text[: n - 1] + "…"


Item = tuple[str, str]


def _item(item: Item, n: int) -> str:
    text, suffix = item
    return _cap(text, max(20, n - len(suffix))) + suffix


@dataclass
class _Facts:
    goal: str = ""  # the first ask of the span
    active: str = ""  # the newest ask, when no reply answered it (it may still be in progress)
    # List items are (text, suffix): the text is cut to fit, the suffix (a handle) is kept whole.
    pending: list[Item] = field(default_factory=list)  # asks that never got a reply
    answered: list[Item] = field(default_factory=list)  # asks a reply followed
    actions: list[Item] = field(default_factory=list)  # calls that ran to the end, and replies
    errors: list[Item] = field(default_factory=list)  # calls that ran and failed
    blocked: list[Item] = field(default_factory=list)  # denied, interrupted, or without a result
    files: dict[str, str] = field(default_factory=dict)  # path → op of a successful write
    commands: list[str] = field(default_factory=list)  # bash commands that ran
    findings: list[Item] = field(default_factory=list)  # notable lines of the outputs that ran
    decisions: list[Item] = field(default_factory=list)  # lines written as decisions
    stated: list[Item] = field(default_factory=list)  # sentences of the user's asks stating a value


def _clean(text: str) -> str:
    # Redacted while whole: the caps below flatten lines and clip, and a flattened YAML line or
    # a clipped key would no longer be recognised as a secret.
    return scrub(SUMMARY_BODY, text[:SCAN_CHARS]).strip()


def _first_line(text: str) -> str:
    return _clean(text).split("\n", 1)[0].strip()


def _findings(result: str, command: str, leading: Sequence[str] = ()) -> list[str]:
    """One-off facts of an output: `leading` (lines the conversation named or a later run
    changed, `context/observations/fact_context.py`), then the notes its excerpt carries (a spilled output),
    else the notable lines of the whole text; the command's own echo (`$ make ci X=1`) is not a
    finding."""
    out: list[str] = []
    for fact in [*leading, *standout_facts(result, FINDINGS_PER_OUTPUT + 1)]:
        clean = _first_line(fact)
        if clean and clean not in out and not (command and (command in clean or _is_echo(clean, command))):
            out.append(clean)
    return out[:FINDINGS_PER_OUTPUT]


def _is_echo(line: str, command: str) -> bool:
    """`$ make ci X=1` echoing `make ci X=1 2>&1`: the command's own first words, not a finding."""
    echoed = line[2:].strip() if line.startswith("$ ") else ""
    return bool(echoed) and command.startswith(echoed)


def _with_new_values(files: dict[str, str], calls: Sequence[CallFact]) -> dict[str, str]:
    """`files` (path → op) with the new text of each file's last short one-line edit."""
    values: dict[str, str] = {}
    for call in calls:
        path = call.arguments.get("path")
        if call.name not in WRITE_TOOLS or call.status != OK or not isinstance(path, str) or path not in files:
            continue
        new = call.arguments.get("new") if call.name in EDIT_TOOLS else None
        text = _clean(new) if isinstance(new, str) else ""
        settings = path.lower().endswith(SETTINGS_SUFFIXES) or path.rsplit("/", 1)[-1].startswith(".env")
        if settings and text and "\n" not in text and len(text) <= EDIT_VALUE_CHARS:
            values[path] = text
        else:  # a longer edit or a whole-file write: the earlier value may be gone
            values.pop(path, None)
    # An undone file's last edit is not its value any more (context/undo_note.py).
    return {path: f"{op}; now: {values[path]}" if path in values and op != UNDONE else op for path, op in files.items()}


_NOT_RUN = {
    DENIED: "denied, not run",
    INTERRUPTED: "interrupted, did not finish",
    UNKNOWN: "no result stored, outcome unknown",
}


def _facts(
    messages: Sequence[dict[str, Any]],
    ids: Sequence[int] | None,
    ends_turn: bool = False,
    kept: KeptLines | None = None,
) -> _Facts:
    def handle(index: int | None) -> str:
        return f" ({msg_handle(ids[index])})" if ids is not None and index is not None else ""

    span = span_facts(messages, ends_turn=ends_turn)
    out = _Facts(files=_with_new_values(span.files_modified(), span.calls))
    asks = [(a, _clean(a.text)) for a in span.asks]
    asks = [(a, text) for a, text in asks if text]
    if asks:
        out.goal = asks[0][1]
        newest, newest_text = asks[-1]
        if newest.fate != ANSWERED:
            out.active = newest_text
    for ask, text in asks:
        for sentence in stated_values(text):
            out.stated.append((f"user stated: {sentence}", handle(ask.index)))
        if ask.fate == ANSWERED:
            out.answered.append((text, f" → answered{handle(ask.answer_index)}"))
        elif ask.fate == UNANSWERED and text != out.active:
            out.pending.append((text, f" (no reply followed){handle(ask.index)}"))
    replies = {i: _first_line(compaction_text(messages[i])) for i in span.answers}
    for i, message in enumerate(messages):
        if message.get("role") in ("assistant", "user"):
            for line in _clean(compaction_text(message)).split("\n"):
                if _DECISION.match(line):
                    out.decisions.append((line.strip().lstrip("-*• "), handle(i)))
    events: list[tuple[int, Item]] = [(i, ("answered: " + line, handle(i))) for i, line in replies.items()]
    ran: list[tuple[CallFact, str]] = []  # the calls that ran to the end, with their handle
    for call in span.calls:
        identity = _clean(tool_identity(call.name, call.arguments))
        what = f"{call.name} {identity}".strip()
        where = handle(call.result_index if call.result_index is not None else call.index)
        if call.status in _NOT_RUN:
            out.blocked.append((f"{_NOT_RUN[call.status]}: {what}", where))
            continue
        if call.name == "bash" and isinstance(call.arguments.get("command"), str):
            out.commands.append(_first_line(call.arguments["command"]))
        if call.status == OK:
            events.append((call.index, (what, where)))
            ran.append((call, where))
            continue
        first = _first_line(call.result_text)
        if looks_failed(first):  # the tool's own first line says what failed
            out.errors.append((first, where))
        else:
            out.errors.append((f"{what} failed ({call.status}): {first}", where))
    out.actions = [entry for _, entry in sorted(events, key=lambda e: e[0])]
    out.findings = _newest_findings(ran, ids, kept)
    return out


def _newest_findings(
    ran: Sequence[tuple[CallFact, str]], ids: Sequence[int] | None, kept: KeptLines | None
) -> list[Item]:
    """The findings of the calls that ran, in order, from the newest call back until MAX_FINDINGS
    are found: a summary lists only the newest MAX_FINDINGS at any scale, and reading every output
    of a long run (its notable lines, the lines later messages name, their redaction) for findings
    it then drops was a third of a leaf's time."""
    newest_first: list[list[Item]] = []
    found = 0
    for call, where in reversed(ran):
        if found >= MAX_FINDINGS:
            break
        leading = kept(ids[call.result_index]) if kept and ids and call.result_index is not None else ()
        command = _first_line(str(call.arguments.get("command") or ""))
        items = [(f"{call.name}: {finding}", where) for finding in _findings(call.result_text, command, leading)]
        newest_first.append(items)
        found += len(items)
    return [item for items in reversed(newest_first) for item in items]


def _build(facts: _Facts, previous_goal: str, scale: int) -> StructuredSummary:
    """The summary of `facts` with its caps divided by 2**`scale` (the facts are read once per
    span, not once per scale: reading them was most of a leaf's time)."""
    div = 2**scale
    item = max(40, LIST_ITEM_CHARS // div)
    goal_src = previous_goal or facts.goal
    files = [FileChange(path, op) for path, op in facts.files.items()][-max(1, MAX_FILES // div) :]
    commands = [_cap(c, MAX_COMMAND_CHARS) for c in dict.fromkeys(facts.commands)]
    return StructuredSummary(
        user_goal=_cap(goal_src, max(60, GOAL_CHARS // div)),
        active_task=(
            _verbatim(facts.active, max(80, ASK_CHARS // div)) if facts.active else "" if facts.goal else NO_ASK
        ),
        pending_user_asks=[_item(a, item) for a in facts.pending][-max(1, MAX_ASKS // div) :] if scale < 2 else [],
        resolved_questions=[_item(a, item) for a in facts.answered][-max(1, MAX_ASKS // div) :] if scale < 2 else [],
        completed_actions=[_item(a, item) for a in facts.actions][-max(1, MAX_ACTIONS // div) :],
        decisions=[_item(d, max(item, 120)) for d in facts.decisions][-max(1, MAX_DECISIONS // div) :],
        key_findings=[_item(f, max(item, 100)) for f in facts.findings][-max(1, MAX_FINDINGS // div) :],
        constraints_and_preferences=[_item(s, STATED_CHARS) for s in facts.stated][-max(1, MAX_STATED // div) :],
        errors_and_fixes=[_item(e, item) for e in facts.errors][-max(1, MAX_ERRORS // div) :],
        blocked_items=[_item(b, item) for b in facts.blocked][-max(1, MAX_BLOCKED // div) :],
        files_modified=files,
        artifacts=commands[: max(1, 8 // div)] if scale < 2 else [],
        fallback=True,
    )


def minimal_summary(
    messages: Sequence[dict[str, Any]], previous_goal: str = "", ends_turn: bool = False
) -> StructuredSummary:
    """The smallest honest summary: the goal and the open ask, cut short."""
    facts = _facts(messages, None, ends_turn)
    return StructuredSummary(
        user_goal=_cap(previous_goal or facts.goal, 60),
        active_task=_verbatim(facts.active, 60) if facts.active else "",
        fallback=True,
    )


def extractive_summary(
    messages: Sequence[dict[str, Any]],
    *,
    ids: Sequence[int] | None = None,
    source_tokens: int,
    previous_goal: str = "",
    count: Callable[[str], int] | None = None,
    ends_turn: bool = False,
    kept: KeptLines | None = None,
) -> StructuredSummary:
    """A fallback summary strictly smaller than `source_tokens` when at all possible.
    `ends_turn`: a user message follows the span (an ask without a reply in it was never answered).
    `kept`: by message id, lines of its output to list first among its findings."""
    if count is None:
        from myrm_tui.context.window.tokens import count_text_tokens

        count = count_text_tokens
    facts = _facts(messages, ids, ends_turn, kept)
    for scale in range(SHRINK_STEPS):
        summary = _build(facts, previous_goal, scale)
        if count(body_text(summary)) < source_tokens:
            return summary
    summary = minimal_summary(messages, previous_goal, ends_turn)
    if count(body_text(summary)) < source_tokens:
        return summary
    return replace(summary, user_goal="", active_task="")
