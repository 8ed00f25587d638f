"""What `myrm run` prints while a turn streams, and the --json summary it ends with.

Streamed model text goes to stdout (escapes shown, not obeyed); tool lines, notes and errors go
to stderr, redacted and clipped (CI logs and scrollback keep them). The exit code follows from
how the turn ended.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TURN_ERROR,
    err,
    one_line,
)

if TYPE_CHECKING:  # types only: the dispatch in `handle` goes by class name, not by import
    from myrm_tui.agent.events import (
        ApprovalRequest,
        AssistantMessageStored,
        Notice,
        StepStarted,
        ToolFinished,
        ToolOutputChunk,
        ToolStarted,
        TurnError,
        TurnFinished,
    )
    from myrm_tui.llm.events import RetryEvent, TextDelta, UsageEvent

ARG_PREVIEW_CHARS = 100  # a tool line on stderr shows this much of the call


@dataclass
class RunReport:
    """Prints the turn as it streams and remembers what the --json summary needs."""

    session_id: str
    model: str
    stream_text: bool = True
    texts: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cached_read_tokens": 0,
            "cached_write_tokens": 0,
            "cost": None,
        }
    )
    finish_reason: str | None = None
    error: dict[str, str] | None = None
    interrupted: bool = False
    # The reader of stdout left (a pipe into `head`): nothing more is printed, the exit is 141.
    output_closed: bool = False
    _last_char: str = "\n"

    def handle(self, event: Any) -> None:
        # Event classes are looked up by name: the agent module imports litellm-side types we
        # must not require at import time, and a name table keeps this a flat dispatch.
        handler = getattr(self, "_on_" + type(event).__name__, None)
        if handler is not None:
            handler(event)

    # -- streamed text
    def _on_TextDelta(self, event: TextDelta) -> None:
        if self.stream_text and event.text:
            shown = output.answer(event.text)  # model text is data: escapes shown, not obeyed
            self._last_char = shown[-1]

    def _on_StepStarted(self, event: StepStarted) -> None:
        if event.step > 1 and self._last_char != "\n" and self.stream_text:
            self._last_char = output.answer("\n")

    def _on_AssistantMessageStored(self, event: AssistantMessageStored) -> None:
        if event.text:
            self.texts.append(event.text)

    # -- tools
    def _on_ToolStarted(self, event: ToolStarted) -> None:
        self.tool_calls.append(
            {"id": event.call_id, "name": event.name, "arguments": event.arguments, "status": "started"}
        )
        err(f"→ {event.name} {_argument_preview(event.arguments)}".rstrip())

    def _on_ToolFinished(self, event: ToolFinished) -> None:
        entry = next((c for c in self.tool_calls if c["id"] == event.call_id), None)
        if entry is None:  # a result for a call that never "started" (e.g. denied up front)
            entry = {"id": event.call_id, "name": event.name, "arguments": {}}
            self.tool_calls.append(entry)
        entry.update(
            status=event.status,
            ok=event.ok,
            content=event.content,
            duration_s=round(event.duration_s, 3),
            vault_handle=event.vault_handle,
        )
        mark = "✓" if event.ok else "✗"
        detail = "" if event.ok else ": " + _echo(event.content)
        err(f"{mark} {event.name} {event.status} ({event.duration_s:.1f}s){detail}")

    def _on_ToolOutputChunk(self, event: ToolOutputChunk) -> None:
        """A map's progress lines (agent/map/progress.py) go to stderr, like the tool lines; other
        live output stays out (the result line says how the tool ended)."""
        from myrm_tui.agent.map.progress import is_progress

        for line in event.text.splitlines():
            if is_progress(line):
                err(_echo(line))

    def _on_ApprovalRequest(self, event: ApprovalRequest) -> None:
        """Unreachable with a headless agent (it refuses such calls itself, with the true reason);
        kept so a future request type can never leave the turn waiting for an answer."""
        if event.decision is not None and not event.decision.done():
            event.decision.set_result(False)
        err(f"not run: {event.summary} — nobody can be asked in a headless run.")

    # -- notes, usage, end
    def _on_Notice(self, event: Notice) -> None:
        err(f"{event.level}: {event.text}")

    def _on_RetryEvent(self, event: RetryEvent) -> None:
        err(f"retry {event.attempt}/{event.max_attempts} in {event.delay_s:.1f}s: {event.reason}")

    def _on_UsageEvent(self, event: UsageEvent) -> None:
        for key in ("prompt_tokens", "completion_tokens", "cached_read_tokens", "cached_write_tokens"):
            self.usage[key] += getattr(event, key) or 0
        if event.cost is not None:
            self.usage["cost"] = (self.usage["cost"] or 0.0) + event.cost

    def _on_TurnError(self, event: TurnError) -> None:
        self.error = {"error_class": event.error_class, "message": event.message, "hint": event.hint}
        self.finish_stdout()
        err(f"error: {event.message} {event.hint}".rstrip())

    def _on_TurnFinished(self, event: TurnFinished) -> None:
        self.finish_reason = event.reason
        if event.reason == "tool_limit":
            err(
                f"note: stopped after {event.steps} model calls (max_steps); continue with "
                f"`myrm run --session {self.session_id[:12]} ...` or raise --max-steps."
            )

    def crash(self, exc: Exception) -> None:
        from myrm_tui.store.disk_full import disk_full

        full = disk_full(exc)
        if full is not None:  # not a bug: the sentence says which disk and what to do
            self.error = {"error_class": type(full).__name__, "message": str(full), "hint": ""}
        else:
            self.error = {
                "error_class": type(exc).__name__,
                "message": str(exc) or type(exc).__name__,
                "hint": "This is a bug in myrm; the session is kept. Please report it.",
            }
        self.finish_stdout()
        err(f"error: {self.error['message']} {self.error['hint']}".rstrip())

    def finish_stdout(self) -> None:
        """End streamed text with a newline so the shell prompt starts on its own line."""
        if self.stream_text and self._last_char != "\n" and not self.output_closed:
            self._last_char = output.answer("\n")

    def exit_code(self) -> int:
        if self.output_closed:
            return EXIT_BROKEN_PIPE
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.error is not None or self.finish_reason == "error":
            return EXIT_TURN_ERROR
        return EXIT_OK

    def as_json(self) -> dict[str, Any]:
        reason = "interrupted" if self.interrupted else self.finish_reason
        return {
            "session_id": self.session_id or None,
            "model": self.model,
            "text": "\n\n".join(self.texts),
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "finish_reason": reason,
            "error": self.error,
        }


def _echo(text: str) -> str:
    """One stderr line of model- or tool-made text: redacted while whole, then clipped (stderr
    ends up in CI logs and terminal scrollback)."""
    from myrm_tui.sinks import RUN_ECHO, SCAN_CHARS, scrub

    return one_line(scrub(RUN_ECHO, text[:SCAN_CHARS]), ARG_PREVIEW_CHARS)


def _argument_preview(arguments: dict[str, Any]) -> str:
    for key in ("command", "path", "file_path", "pattern", "query", "handle"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return _echo(value)
    if not arguments:
        return ""
    from myrm_tui.sinks import RUN_ECHO, scrub_obj

    # Values redacted as decoded strings first: JSON escapes would hide a YAML or .env line.
    return _echo(json.dumps(scrub_obj(RUN_ECHO, arguments), ensure_ascii=False))
