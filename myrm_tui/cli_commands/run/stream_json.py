"""`myrm run --output-format stream-json`: the turn as JSON Lines on stdout, one event per line.

For programs that follow a run as it happens (an editor plugin, a CI step, a dashboard) and
cannot wait for `--json`'s single document. Every line is one JSON object with a `type`; the
schema is in docs/commands.md (Streamed JSON). The last line is always the `result` (the same
fields as `--json`, plus `exit_code`), also when the run stopped before a turn could start.

Like `--json`, the answer's text is not redacted (it is what the user asked for); tool
arguments, results, notices and compaction data are scrubbed like the stderr tool lines
(sinks.RUN_ECHO). Lines are made inert for a terminal without changing what they say
(output.answer_json). stderr keeps the human-readable tool lines.

Compaction events are stored facts the turn's events do not carry: the store's compaction log is
read before each model call and at the end, so each one is printed once, in order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.run.report import RunReport
from myrm_tui.sinks import RUN_ECHO, scrub, scrub_obj

if TYPE_CHECKING:
    from myrm_tui.agent.events import (
        Notice,
        StepStarted,
        ToolFinished,
        ToolOutputChunk,
        ToolStarted,
        TurnError,
        TurnFinished,
    )
    from myrm_tui.llm.events import ReasoningDelta, RetryEvent, TextDelta, UsageEvent
    from myrm_tui.store.store import Store

# The version of the line format below; a reader checks it on the `start` line. Raised when a
# field is renamed or removed (adding a field or a type is not a break).
STREAM_SCHEMA_VERSION = 1


def emit(kind: str, **fields: Any) -> None:
    output.answer_json(json.dumps({"type": kind, **fields}, ensure_ascii=False))


@dataclass
class StreamJsonReport(RunReport):
    """A RunReport that also prints each event as a JSON line (stream_text is off: the text
    arrives as `text` lines)."""

    store: Store | None = None
    _last_compaction: int | None = None
    _compaction_seen: bool = False
    _started: bool = field(default=False)

    def handle(self, event: Any) -> None:
        if not self._started:
            self.start()
        super().handle(event)
        line = getattr(self, "_line_" + type(event).__name__, None)
        if line is not None:
            line(event)

    def start(self) -> None:
        """The first line: which session and model, and the schema version. Compactions already
        in the log belong to earlier turns and are skipped."""
        self._started = True
        self._compactions(announce=False)
        emit("start", schema_version=STREAM_SCHEMA_VERSION, session_id=self.session_id, model=self.model)

    def result(self, exit_code: int) -> None:
        """The last line: the run's figures (the --json document) and its exit code."""
        if not self._started:
            self.start()
        self._compactions()
        document = self.as_json()
        document["tool_calls"] = scrub_obj(RUN_ECHO, document["tool_calls"])  # as their own lines are
        document["error"] = scrub_obj(RUN_ECHO, document["error"])
        emit("result", **document, exit_code=exit_code)

    def _compactions(self, announce: bool = True) -> None:
        if self.store is None or not self.session_id:
            return
        from myrm_tui.store.event_kinds import COMPACTION

        for record in self.store.events(self.session_id, COMPACTION, after_id=self._last_compaction):
            self._last_compaction = record.id
            if announce:
                emit("compaction", **scrub_obj(RUN_ECHO, record.data))

    # -- one line per event (RunReport's _on_ handlers still print the stderr lines)
    def _line_TextDelta(self, event: TextDelta) -> None:
        if event.text:
            emit("text", text=event.text)

    def _line_ReasoningDelta(self, event: ReasoningDelta) -> None:
        if event.text:
            emit("reasoning", text=event.text)

    def _line_StepStarted(self, event: StepStarted) -> None:
        self._compactions()  # the prompt of this call was assembled (and compacted) just now
        emit("step", step=event.step, model=event.model, prompt_tokens=event.prompt_tokens)

    def _line_ToolStarted(self, event: ToolStarted) -> None:
        emit("tool_call", id=event.call_id, name=event.name, arguments=scrub_obj(RUN_ECHO, event.arguments))

    def _line_ToolFinished(self, event: ToolFinished) -> None:
        emit(
            "tool_result",
            id=event.call_id,
            name=event.name,
            ok=event.ok,
            status=event.status,
            content=scrub(RUN_ECHO, event.content),
            duration_s=round(event.duration_s, 3),
            vault_handle=event.vault_handle,
        )

    def _line_ToolOutputChunk(self, event: ToolOutputChunk) -> None:
        """A map's progress (the lines `myrm run` prints on stderr) as figures; other live output
        stays out, as on stderr (the tool_result line has the outcome)."""
        from myrm_tui.agent.map.progress import read_progress

        for line in event.text.splitlines():
            progress = read_progress(line)
            if progress is not None:
                emit(
                    "map_progress",
                    id=event.call_id,
                    name=progress.kind,  # the map's tool: llm_map or agentic_map
                    done=progress.done,
                    failed=progress.failed,
                    total=progress.total,
                    resumed=progress.resumed,
                    tokens=progress.tokens,
                    cost=progress.cost,
                    note=scrub(RUN_ECHO, progress.note),
                )

    def _line_Notice(self, event: Notice) -> None:
        emit("notice", level=event.level, text=scrub(RUN_ECHO, event.text))

    def _line_RetryEvent(self, event: RetryEvent) -> None:
        reason = scrub(RUN_ECHO, event.reason)  # a provider's text may quote the endpoint and key
        emit("retry", attempt=event.attempt, max_attempts=event.max_attempts, delay_s=event.delay_s, reason=reason)

    def _line_UsageEvent(self, event: UsageEvent) -> None:
        emit(
            "usage",
            prompt_tokens=event.prompt_tokens,
            completion_tokens=event.completion_tokens,
            cached_read_tokens=event.cached_read_tokens,
            cached_write_tokens=event.cached_write_tokens,
            cost=event.cost,
        )

    def _line_TurnError(self, event: TurnError) -> None:
        emit("error", error_class=event.error_class, message=scrub(RUN_ECHO, event.message), hint=event.hint)

    def _line_TurnFinished(self, event: TurnFinished) -> None:
        emit("turn_finished", reason=event.reason, steps=event.steps)
