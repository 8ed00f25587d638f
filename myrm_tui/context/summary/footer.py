"""The deterministic footer of a summary: what the covered messages touched, from the rows.

Why computed, not written by the model: files, tools, errors and handles are facts the store
already holds; a model may drop or invent them. The footer is the part of a summary that is
always exact, and it tells the model which handle returns what (one `ctx_expand` away).
It is also what an omission marker needs, so `markers.omission_marker` can be built on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.context.observations.intent import compaction_text, looks_failed
from myrm_tui.context.rows.views import msg_handle, parse_arguments
from myrm_tui.context.summary.outcomes import call_statuses
from myrm_tui.context.summary.schema import neutralize
from myrm_tui.sinks import SCAN_CHARS, SUMMARY_FOOTER, scrub
from myrm_tui.store.tool_status import OK, UNKNOWN

# Caps keep the footer small whatever it covers: it must save far more than it costs.
MAX_FILES = 12
MAX_TOOLS = 8
MAX_COMMANDS = 8
MAX_ERRORS = 4
MAX_ERROR_CHARS = 120
MAX_COMMAND_CHARS = 60
# Handles listed individually (errors, user asks); the full range is always given as first…last.
MAX_HANDLES = 6
# Which op a tool performs on its `path` argument; anything else that names a path is a read.
FILE_OPS = {"file_write": "write", "file_edit": "edit", "file_read": "read"}
WRITE_OPS = ("write", "edit")


@dataclass(frozen=True)
class ErrorSeen:
    first_line: str
    handle: str


@dataclass(frozen=True)
class Footer:
    # path → strongest op (a successful write/edit beats read; "edit denied" names one that did not run)
    files: dict[str, str] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)  # tool name → calls, most used first
    commands: dict[str, int] = field(default_factory=dict)  # bash first line → runs
    errors: tuple[ErrorSeen, ...] = ()
    handles: tuple[str, ...] = ()  # worth expanding: user asks and errors
    first_handle: str = ""
    last_handle: str = ""
    count: int = 0

    def render(self) -> str:
        lines: list[str] = []
        if self.files:
            shown = list(self.files.items())[-MAX_FILES:]
            more = len(self.files) - len(shown)
            lines.append(
                "Files: " + ", ".join(f"{p} ({op})" for p, op in shown) + (f" (+{more} more)" if more > 0 else "")
            )
        if self.tools:
            lines.append(
                "Tools: " + ", ".join(f"{t} ×{n}" if n > 1 else t for t, n in list(self.tools.items())[:MAX_TOOLS])
            )
        if self.errors:
            lines.append("Errors: " + " | ".join(f"{e.first_line} ({e.handle})" for e in self.errors))
        if self.first_handle:
            span = (
                self.first_handle
                if self.first_handle == self.last_handle
                else f"{self.first_handle} … {self.last_handle}"
            )
            extra = f"; notable: {', '.join(self.handles)}" if self.handles else ""
            lines.append(f"Expand: {span}{extra}")
        # Paths are arguments too: the rendered footer leaves its messages as a whole.
        return neutralize(scrub(SUMMARY_FOOTER, "\n".join(lines)))


def _one_line(text: str, cap: int) -> str:
    """The first line, redacted while whole, then clipped to `cap`."""
    first = scrub(SUMMARY_FOOTER, text.strip().split("\n", 1)[0][:SCAN_CHARS]).strip()
    return first if len(first) <= cap else first[: cap - 1] + "…"


def build_footer(messages: Sequence[dict[str, Any]], ids: Sequence[int] | None = None) -> Footer:
    """Footer of OpenAI-format messages; `ids` (same length) are their store ids for handles."""
    if ids is not None and len(ids) != len(messages):
        raise ValueError("build_footer: ids and messages differ in length; pass one id per message.")
    files: dict[str, str] = {}
    tools: Counter[str] = Counter()
    commands: Counter[str] = Counter()
    errors: list[ErrorSeen] = []
    notable: list[str] = []
    status = call_statuses(messages)
    for i, message in enumerate(messages):
        handle = msg_handle(ids[i]) if ids is not None else f"#{i}"
        role = message.get("role")
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            name = str(function.get("name", ""))
            args = parse_arguments(function.get("arguments"))
            tools[name] += 1
            path = args.get("path")
            if isinstance(path, str) and path:
                op = FILE_OPS.get(name, "read")
                outcome = status.get(str(call.get("id") or ""), UNKNOWN)
                if op in WRITE_OPS and outcome != OK:
                    op = f"{op} {outcome}"  # "edit denied": named, but the file was not changed
                if files.get(path) not in WRITE_OPS:
                    files.pop(path, None)  # re-insert so the order is "last touched"
                    files[path] = op
            if name == "bash" and isinstance(args.get("command"), str):
                commands[_one_line(args["command"], MAX_COMMAND_CHARS)] += 1
        if role == "tool" and looks_failed(compaction_text(message)):
            errors.append(ErrorSeen(_one_line(compaction_text(message), MAX_ERROR_CHARS), handle))
            notable.append(handle)
        elif role == "user" and compaction_text(message).strip():
            notable.append(handle)
    handles = tuple(dict.fromkeys(notable))[-MAX_HANDLES:] if ids is not None else ()
    return Footer(
        files=files,
        tools=dict(tools.most_common()),
        commands=dict(commands.most_common(MAX_COMMANDS)),
        errors=tuple(errors[-MAX_ERRORS:]),
        handles=handles,
        first_handle=msg_handle(ids[0]) if ids else "",
        last_handle=msg_handle(ids[-1]) if ids else "",
        count=len(messages),
    )


def footer_from_records(rows: Sequence[Any]) -> Footer:
    """Footer of store rows (`MessageRecord`: `.id` and `.message`)."""
    return build_footer([r.message for r in rows], [r.id for r in rows])
