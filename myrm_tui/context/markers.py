"""The omission marker: what stands in the prompt for messages left out of it.

Everything in it is computed from the stored rows (not written by a model): the handles of the
range, the files touched, the commands run, the errors seen and the session notes. So the
model knows what it would get back, and from where, in one recall call.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from myrm_tui.context.intent import _text_of, looks_failed
from myrm_tui.context.views import UNTRUSTED_CLOSE, UNTRUSTED_OPEN, msg_handle, parse_arguments
from myrm_tui.store.records import MessageRecord

# Caps keep a marker small whatever it covers: it must save far more than it costs.
MAX_FILES = 12
MAX_COMMANDS = 8
MAX_ERRORS = 4
MAX_NOTES = 10
NOTE_TOOL = "session_note"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))


def omission_marker(rows: Sequence[MessageRecord]) -> str:
    files: dict[str, str] = {}
    commands: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    errors: list[str] = []
    notes: list[str] = []
    user_asks: list[str] = []
    for row in rows:
        message = row.message
        if row.role == "user":
            text = _text_of(message).strip().replace("\n", " ")
            if text:
                user_asks.append(f"{text[:100]}{'…' if len(text) > 100 else ''} ({msg_handle(row.id)})")
        for call in message.get("tool_calls") or ():
            name = call.get("function", {}).get("name", "")
            args = parse_arguments(call.get("function", {}).get("arguments"))
            tools[name] += 1
            path = args.get("path")
            if isinstance(path, str):
                op = {"file_write": "write", "file_edit": "edit"}.get(name, "read")
                if files.get(path) not in ("write", "edit"):
                    files[path] = op
            if name == "bash" and isinstance(args.get("command"), str):
                commands[args["command"].strip().split("\n")[0][:60]] += 1
            if name == NOTE_TOOL:
                note = str(args.get("text") or args.get("note") or "").strip()
                if note:
                    notes.append(note[:300])
        if row.role == "tool" and looks_failed(_text_of(message)):
            first = _text_of(message).strip().split("\n")[0][:120]
            errors.append(f"{first} ({msg_handle(row.id)})")

    first, last = rows[0], rows[-1]
    lines = [
        UNTRUSTED_OPEN,
        f"[{len(rows)} earlier messages are omitted from this prompt ({msg_handle(first.id)} … "
        f"{msg_handle(last.id)}, {_when(first.created_at)} → {_when(last.created_at)} UTC). They are stored: "
        f'ctx_search("words") finds them, ctx_expand("msg:ID") returns one.]',
    ]
    if user_asks:
        lines.append("User asks: " + " | ".join(user_asks[-3:]))
    if files:
        shown = list(files.items())[-MAX_FILES:]
        lines.append("Files: " + ", ".join(f"{p} ({op})" for p, op in shown))
    if commands:
        lines.append("Commands: " + ", ".join(f"{c} ×{n}" if n > 1 else c
                                             for c, n in commands.most_common(MAX_COMMANDS)))
    elif tools:
        lines.append("Tools: " + ", ".join(f"{t} ×{n}" for t, n in tools.most_common(MAX_COMMANDS)))
    if errors:
        lines.append("Errors: " + " | ".join(errors[-MAX_ERRORS:]))
    if notes:
        lines.append("Session notes: " + " | ".join(notes[-MAX_NOTES:]))
    lines.append(UNTRUSTED_CLOSE)
    return "\n".join(lines)
