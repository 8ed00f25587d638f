"""A capable model's summary, written without a model: the benchmark's `oracle` summarizer.

Why: the benchmark's fake summarizers (`llm/fake_providers/replay_summarizers.py`) wrote a constant line or the
needles of their input; the auditor rejected every answer, so every figure measured the
extractive fallback and never the model-summary path (prompt, auditor, escalation, folds). This
stand-in reads only what a summarizer model is sent (the transcript of the request: the
conversation, tool outputs cut to head and tail plus their notable lines) and writes what a
careful model writes from it, in the 14-field schema: the user's goal and open ask, their rules
and the values they stated, each call and its outcome, the facts the outputs showed (the lines
they single out, errors, warnings, lines carrying a value), the assistant's decisions, the work
its replies report ("I updated src/a.py: ...") and the files it changed. It copies identifiers
and values word for word and invents nothing. It reads the auditor's feedback as a model would:
identifiers it is told to keep are added, unknown ones dropped. A fold merges its children's
fields and writes their timeline; past the first level it leaves out per-step minutiae, as
those levels' instructions ask, and names what they touched.

It is deterministic and knows nothing of any benchmark's facts: the same request, the same
answer. `answer(request)` is the JSON a model would answer; `summary_text(messages)` the
rendered body, for contenders that take a text summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from myrm_tui.context.filters.notable import carries_value, notable_lines
from myrm_tui.context.summary.auditor import RULE_SENTENCE, extract_entities
from myrm_tui.context.summary.prompts import style_for
from myrm_tui.context.summary.schema import FIELD_CAPS, FileChange, StructuredSummary, body_text, enforce_caps
from myrm_tui.context.summary.source import NOTABLE_END

# Item lengths: a finding or an action is one line of a log, a call and its verdict.
ITEM_CHARS = 240
GOAL_CHARS = 240
# A whole output (a contender that hands its summarizer everything) longer than this is read
# for its shape breaks, as an excerpt's notes would show them; errors and warnings: the first few.
WHOLE_OUTPUT_CHARS = 2_000
MAX_ALARMS = 3
# A plain-text transcript (`# USER`, `ASSISTANT:`, `tool:` at a line start) is split by role.
_ROLE_LINE = re.compile(r"^(?:#+\s*)?(user|assistant|tool|system)\b[^\n:]{0,40}:?\s*", re.I | re.M)
# A transcript block's label (`[msg:12 tool result of call_3]`, `[#4 user]`) and a call line.
_LABEL = re.compile(r"^\[(?:msg:\d+|#\d+) (\w+)(?: result of [^\]\n]*)?\]$", re.MULTILINE)
_CALL = re.compile(r"^→ call (\S+) \([^)]*\): (.*)$", re.MULTILINE)
_NOTABLE_HEAD = "notable lines among them:]"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(
    r"\b(?:decision|decided|let's go with|going with|going forward|we settled|settled on|i'll keep|we'll keep|"
    r"we'll use|i'll use|chose|choose|pin(?:ned)?|switch(?:ed)? to)\b",
    re.I,
)
# A reply's report of work the assistant did itself ("I updated src/a.py: ...", "I removed X"): a
# model records it as a completed action, and the files it names as modified, as it would a call.
_DID = re.compile(
    r"\b(?:I|I've|we|we've)\s+(?:have\s+)?(?:updated|changed|edited|fixed|removed|deleted|added|renamed|moved|"
    r"created|wrote|rewrote|reverted|refactored|replaced|patched)\b",
    re.I,
)
_FAILED = re.compile(r"\b(?:error|failed|failure|exception|traceback|fatal|denied|refused)\b", re.I)
_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b:")
_WARNING = re.compile(r"\b(?:warn|warning)\b", re.I)
_VAULT = re.compile(r"vault://[0-9a-fA-F]{6,64}")
_KEEP_IDS = re.compile(r"Keep these exactly as written: (.+?)\.\s*$", re.M)
_DROP_IDS = re.compile(r"(?:not in the history[^:]*): (.+?)\.\s*$", re.M)
_MISSING_RULE = re.compile(r'missing: ((?:"[^"]*"(?: \| )?)+)\.')
_MISSING_ASK = re.compile(r'An open user request is missing: [^"]*"([^"]*)"')
_MISSING_FILES = re.compile(r"files_modified must name every file the history changed; missing: (.+?)\.\s*$", re.M)
_FOLD = "SUMMARIES TO FOLD"
_JSON_ONLY_TAIL = "\n\nAnswer with the JSON object only"
_FIELD_LABEL = re.compile(r"^([A-Z][\w &→'()]*?):\s*(.*)$")


def _cut(text: str, n: int = ITEM_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _blocks(text: str) -> list[tuple[str, str]]:
    """(role, text) of each labelled transcript block of a summarizer request."""
    labels = list(_LABEL.finditer(text))
    out = []
    for i, label in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        out.append((label.group(1), text[label.end() : end].strip("\n")))
    return out


def _calls(message: dict[str, Any], text: str) -> list[tuple[str, str]]:
    """(tool name, arguments text) of an assistant block: from its call lines, or its tool_calls."""
    found = [(m.group(1), m.group(2)) for m in _CALL.finditer(text)]
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        args = function.get("arguments")
        found.append((str(function.get("name", "")), args if isinstance(args, str) else json.dumps(args)))
    return found


def _args(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _what(name: str, raw: str) -> str:
    args = _args(raw)
    for key in ("command", "path", "pattern", "query", "url", "handle"):
        if isinstance(args.get(key), str):
            return f"{name} {args[key]}"
    return f"{name} {raw[:80]}"


def _result_facts(text: str) -> list[str]:
    """The lines of a tool result a careful reader lifts: the lines an excerpt singles out (or,
    reading a whole output, the lines that break its shape: `filters/notable.py`), an exception's
    message, the first errors and warnings."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    picked: list[str] = []
    if _NOTABLE_HEAD in text:
        hidden = text.split(_NOTABLE_HEAD, 1)[1].split(NOTABLE_END, 1)[0]
        picked += [line.strip() for line in hidden.split("\n") if line.strip()]
    elif len(text) > WHOLE_OUTPUT_CHARS:
        picked += [found.text for found in notable_lines(text, 3)]
    alarms = 0
    for line in lines:
        if line.startswith(("… kept:", "… line ")):
            picked.append(line.strip("… ").removeprefix("kept: "))
        elif alarms < MAX_ALARMS and not line.startswith("[") and _alarm(line):
            picked.append(line)
            alarms += 1
    return list(dict.fromkeys(_cut(p) for p in picked if p))


def _alarm(line: str) -> bool:
    return bool(_EXCEPTION.search(line) or _WARNING.search(line) or _FAILED.search(line))


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def leaf(messages: Sequence[dict[str, Any]]) -> StructuredSummary:
    """The summary of a chunk: `messages` as a summarizer request's transcript blocks, or plain
    provider messages (a contender's history)."""
    asks: list[str] = []
    last_user = -1
    last_reply = -1
    actions: list[str] = []
    findings: list[str] = []
    errors: list[str] = []
    decisions: list[str] = []
    rules: list[str] = []
    stated: list[str] = []
    files: dict[str, str] = {}
    artifacts: list[str] = []
    pending: list[tuple[str, str]] = []  # (call text, its name) awaiting a result, in order
    resolved: list[str] = []  # an ask and the first sentence of the reply that answered it
    answered = -1
    names: dict[str, None] = {}  # identifiers the replies discussed, in order
    for index, message in enumerate(messages):
        role = message.get("role")
        text = _text(message)
        if role == "user":
            asks.append(text.strip())
            last_user = index
            for sentence in _SENTENCE.split(text):
                sentence = " ".join(sentence.split())
                if not sentence:
                    continue
                if RULE_SENTENCE.search(sentence):
                    rules.append(_cut(sentence))
                elif carries_value(sentence):
                    stated.append(_cut(sentence))
        elif role == "assistant":
            calls = _calls(message, text)
            said = _CALL.sub("", text).strip()
            if said and not calls:
                last_reply = index
                if asks and last_user > max(answered, -1):
                    answered = index
                    reply = _SENTENCE.split(said)[0]
                    resolved.append(_cut(f"{_cut(asks[-1], 120)} → {reply}", 300))
                names.update(dict.fromkeys(e.value for e in extract_entities(said)))
            for sentence in _SENTENCE.split(said):
                sentence = " ".join(sentence.split())
                if sentence and (_DECISION.search(sentence) or carries_value(sentence)):
                    decisions.append(_cut(sentence))
                elif sentence and _DID.search(sentence):
                    # Said once: the action keeps the sentence, the file list only the path.
                    actions.append(_cut(sentence))
                    for entity in extract_entities(sentence):
                        if entity.kind == "path" and "/" in entity.value:
                            files.setdefault(entity.value, "")
            for name, raw in calls:
                pending.append((_what(name, raw), name))
                path = _args(raw).get("path")
                if name in ("file_write", "file_edit") and isinstance(path, str):
                    files[path] = "edited" if name == "file_edit" else "written"
        elif role == "tool":
            what, name = pending.pop(0) if pending else ("tool", "tool")
            head = _first_line(text)
            failed = bool(_FAILED.search(head)) or head.lower().startswith("error")
            actions.append(_cut(f"{what} → {'failed: ' if failed else ''}{head}"))
            if failed:
                errors.append(_cut(f"{what}: {head} -> unresolved"))
            findings += [f"{name}: {fact}" for fact in _result_facts(text)]
            artifacts += _VAULT.findall(text)
    goal = _cut(_SENTENCE.split(asks[0].strip())[0] if asks else "", GOAL_CHARS)
    open_ask = asks[-1] if asks and last_user > last_reply else ""
    summary = StructuredSummary(
        user_goal=goal or "(no user request in this span)",
        active_task=_cut(open_ask, 600) if open_ask else "none",
        completed_actions=actions,
        key_findings=[_cut(f) for f in dict.fromkeys(findings)],
        errors_and_fixes=list(dict.fromkeys(errors)),
        files_modified=[FileChange(path, change) for path, change in files.items()],
        decisions=list(dict.fromkeys(decisions)),
        constraints_and_preferences=list(dict.fromkeys(rules + [f"user stated: {s}" for s in stated])),
        pending_user_asks=[_cut(open_ask, 300)] if open_ask else [],
        resolved_questions=resolved,
        artifacts=list(dict.fromkeys(artifacts)),
    )
    # The narrative names what the replies discussed that no field kept names already.
    summary = _fit_lists(summary)
    said = body_text(summary)
    rest = [name for name in names if name not in said]
    return replace(summary, narrative=_cut("Discussed: " + ", ".join(rest), 600) if rest else "")


def _fit_lists(summary: StructuredSummary) -> StructuredSummary:
    """Lists cut to the schema's caps the way a model keeps them: the items carrying a value and
    the newest first (`enforce_caps`)."""
    return enforce_caps(summary)


# What a fold's instructions (`prompts.style_for`) ask past the first level, as a model reads them:
# a trajectory drops per-step minutiae (single actions, answered questions) but not the paths and
# names they touched. Decisions, rules, findings and files stay: those are what still matters.
# (Durable memory's "keep the lists short" is not followed: halving the findings at depth 3 lost
# facts on coding-400 at 64k, R_verbatim 0.789 -> 0.780, for no saving on the chat.)
_MINUTIAE = ("completed_actions", "resolved_questions")


def _fold_depth(request: Sequence[dict[str, Any]]) -> int:
    """The fold level the request's instructions are written for (1: a timeline)."""
    system = "\n".join(_text(m) for m in request if isinstance(m, dict) and m.get("role") == "system")
    return next((depth for depth in (3, 2) if style_for(depth) in system), 1)


def fold(text: str, depth: int = 1) -> StructuredSummary:
    """The fold of rendered child summaries: their fields merged, their goals as a timeline."""
    merged: dict[str, list[str]] = {}
    goals: list[str] = []
    label_of = {
        "Goal": "user_goal",
        "Active task (user's words)": "active_task",
        "Constraints & preferences": "constraints_and_preferences",
        "Decisions": "decisions",
        "Done": "completed_actions",
        "Files modified": "files_modified",
        "Findings": "key_findings",
        "Errors → fixes": "errors_and_fixes",
        "Resolved questions": "resolved_questions",
        "Artifacts": "artifacts",
        "State": "active_state",
        "Pending user asks": "pending_user_asks",
        "Blocked": "blocked_items",
        "Next steps": "next_steps",
        "Narrative": "narrative",
    }
    for child in text.split("\n\n---\n\n"):
        field = ""
        for line in child.split("\n"):
            match = _FIELD_LABEL.match(line)
            if match and match.group(1) in label_of:
                field = label_of[match.group(1)]
                if match.group(2):
                    merged.setdefault(field, []).append(match.group(2))
                    if field == "user_goal":
                        goals.append(match.group(2))
            elif line.startswith("- ") and field:
                merged.setdefault(field, []).append(line[2:])
    lists: dict[str, Any] = {}
    dropped: list[str] = []  # per-step items a higher level leaves out: their identifiers stay
    for name in FIELD_CAPS:
        items = list(dict.fromkeys(merged.get(name, [])))
        if depth >= 2 and name in _MINUTIAE:
            dropped += items
            items = []
        if name == "files_modified":
            lists[name] = [FileChange(*(item.split(" — ", 1) + [""])[:2]) for item in items]
        else:
            lists[name] = items
    active = merged.get("active_task", [""])[-1]
    timeline = "\n".join(f"{i + 1}. {_cut(goal, 160)}" for i, goal in enumerate(dict.fromkeys(goals)))
    touched = list(dict.fromkeys(e.value for item in dropped for e in extract_entities(item)))
    if touched:
        timeline += "\n" + _cut("Steps touched: " + ", ".join(touched), 600)
    summary = StructuredSummary(
        user_goal=goals[0] if goals else "(see the summaries folded here)",
        active_task=active,
        active_state=(merged.get("active_state") or [""])[-1],
        narrative=timeline or "Earlier summaries folded.",
        **lists,
    )
    return _fit_lists(summary)


def _apply_feedback(summary: StructuredSummary, feedback: str) -> StructuredSummary:
    """What a model does with the auditor's feedback: keeps what it is told to keep, drops what
    it is told is not in the history."""
    keep = [x.strip() for m in _KEEP_IDS.finditer(feedback) for x in m.group(1).split(",") if x.strip()]
    drop = [x.strip() for m in _DROP_IDS.finditer(feedback) for x in m.group(1).split(",") if x.strip()]
    rules = [r.strip('"') for m in _MISSING_RULE.finditer(feedback) for r in m.group(1).split(" | ")]
    asks = [m.group(1) for m in _MISSING_ASK.finditer(feedback)]
    files = [x.strip() for m in _MISSING_FILES.finditer(feedback) for x in m.group(1).split(",") if x.strip()]

    def clean(items: Sequence[str]) -> list[str]:
        return [item for item in items if not any(d and d in item for d in drop)]

    # A model that adds what it is told to keep still respects the list limits (before, one more
    # finding than the cap was rejected again, and the repeated answer ended in the extractive body).
    return _fit_lists(
        replace(
            summary,
            key_findings=clean(summary.key_findings) + ([f"identifiers involved: {', '.join(keep)}"] if keep else []),
            completed_actions=clean(summary.completed_actions),
            decisions=clean(summary.decisions),
            constraints_and_preferences=clean(summary.constraints_and_preferences) + rules,
            pending_user_asks=[*summary.pending_user_asks, *asks],
            files_modified=[*summary.files_modified, *(FileChange(path, "changed") for path in files)],
        )
    )


def answer(request: Sequence[dict[str, Any]]) -> str:
    """The JSON a capable model answers to a summarizer request (the first user message is the
    transcript or the summaries to fold; later user messages are the auditor's feedback)."""
    users = [_text(m) for m in request if isinstance(m, dict) and m.get("role") == "user"]
    first = users[0].rsplit(_JSON_ONLY_TAIL, 1)[0] if users else ""
    if _FOLD in first:
        summary = fold(first.split(":\n", 1)[-1].rsplit("\n\nAnswer with", 1)[0], _fold_depth(request))
    else:
        summary = leaf([{"role": role, "content": text} for role, text in _blocks(first)])
    if len(users) > 1:
        summary = _apply_feedback(summary, "\n".join(users[1:]))
    return summary.to_json()


def _split_roles(text: str) -> list[dict[str, Any]] | None:
    """A plain-text transcript as messages, when it marks its roles at line starts."""
    marks = list(_ROLE_LINE.finditer(text))
    if len(marks) < 2:
        return None
    out = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.append({"role": mark.group(1).lower(), "content": text[mark.end() : end].strip()})
    return out


def summary_text(messages: Sequence[dict[str, Any]]) -> str:
    """The rendered body of `leaf(messages)`: the text summary a contender puts in its prompt
    (a single message holding a plain-text transcript is read by role)."""
    if len(messages) == 1 and messages[0].get("role") == "user":
        split = _split_roles(_text(messages[0]))
        if split is not None:
            messages = split
    return body_text(leaf(messages))
