"""`myrm run`: one turn without the TUI, for scripts and CI.

Headless never blocks on a question: the agent applies the approval policy itself, and an
approval request that still arrives (policy `ask`) is denied with a note saying which flag
allows it. Ctrl+C cancels the turn task, so the agent gets to store a synthetic result for
every unanswered tool call before the process exits with 130.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.cli_commands.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TURN_ERROR,
    EXIT_USAGE,
    bootstrap,
    err,
    onboarding_message,
    one_line,
    open_store,
    resolve_model,
)

TITLE_CHARS = 60  # a session title is the prompt's start; 60 chars fit a list row
ARG_PREVIEW_CHARS = 100  # a tool line on stderr shows this much of the call


def run_command(
    prompt: str,
    *,
    model: str | None,
    session: str | None,
    continue_last: bool,
    json_out: bool,
    approve: str | None,
    max_steps: int | None,
    compact: bool = False,
) -> int:
    if session and continue_last:
        err("error: use either --session ID or --continue, not both.")
        return EXIT_USAGE
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        err("error: the prompt is empty; pass it as an argument or use `-` to read stdin.")
        return EXIT_USAGE
    context = bootstrap({"model": model, "approval": approve, "max_steps": max_steps})
    if context is None:
        return EXIT_USAGE
    resolved = resolve_model(context.settings)
    if resolved is None:
        err(onboarding_message())
        return EXIT_USAGE
    settings, _source = resolved
    from myrm_tui.store.store import StoreError

    store = open_store(context.workspace)
    if store is None:
        return EXIT_USAGE
    try:
        try:
            session_id = _choose_session(store, session, continue_last, settings.model, prompt)
        except StoreError as exc:
            err(f"error: {exc}")
            return EXIT_USAGE
        from myrm_tui.agent.agent import Agent

        agent = Agent(store=store, session_id=session_id, settings=settings, workspace=context.workspace)
        report = RunReport(session_id=session_id, model=settings.model, stream_text=not json_out)
        asyncio.run(_drive(agent.turn(prompt), report))
        report.finish_stdout()
        if compact and report.exit_code() == 0:
            _compact(agent)
        if json_out:
            print(json.dumps(report.as_json(), ensure_ascii=False))
        return report.exit_code()
    finally:
        store.close()


def _compact(agent) -> None:
    """`--compact`: after the turn, compact everything outside the fresh tail now."""
    try:
        event = agent.compact_now()
    except Exception as exc:  # noqa: BLE001 - the turn is stored; say what failed
        err(f"note: compaction failed: {exc}")
        return
    if event is None:
        err("compacted: nothing outside the fresh tail to reduce")
    else:
        err(f"compacted: {event['tokens_before']:,} → {event['tokens_after']:,} tokens "
            f"({event['items']} messages, {event['tier']})")


def _choose_session(store, session: str | None, continue_last: bool, model: str, prompt: str) -> str:
    if session:
        return store.get_session(session).id
    if continue_last:
        latest = store.latest_session()
        if latest is not None:
            return latest.id
        err("note: no earlier session in this workspace; starting a new one.")
    return store.create_session(model=model, title=" ".join(prompt.split())[:TITLE_CHARS]).id


async def _drive(events: AsyncIterator[Any], report: RunReport) -> None:
    """Consume the turn in its own task so Ctrl+C can cancel exactly that task."""

    async def consume() -> None:
        async for event in events:
            report.handle(event)

    task = asyncio.create_task(consume())
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            err("interrupting… (Ctrl+C again to quit at once)")
            task.cancel()
        else:
            # The agent's cleanup is a few SQLite commits; a second press means the user
            # wants out now, and committed rows are safe whatever happens next.
            import os

            os._exit(EXIT_INTERRUPTED)

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    except (NotImplementedError, RuntimeError):  # not the main thread, or no Unix signals
        installed = False
    try:
        await task
    except asyncio.CancelledError:
        report.interrupted = True
    except Exception as exc:  # noqa: BLE001 — an agent bug must still end with a readable line and exit 1
        report.crash(exc)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


@dataclass
class RunReport:
    """Prints the turn as it streams and remembers what the --json summary needs."""

    session_id: str
    model: str
    stream_text: bool = True
    texts: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=lambda: {
        "prompt_tokens": 0, "completion_tokens": 0, "cached_read_tokens": 0,
        "cached_write_tokens": 0, "cost": None,
    })
    finish_reason: str | None = None
    error: dict[str, str] | None = None
    interrupted: bool = False
    _last_char: str = "\n"

    def handle(self, event: Any) -> None:
        # Event classes are looked up by name: the agent module imports litellm-side types we
        # must not require at import time, and a name table keeps this a flat dispatch.
        handler = getattr(self, "_on_" + type(event).__name__, None)
        if handler is not None:
            handler(event)

    # -- streamed text
    def _on_TextDelta(self, event) -> None:
        if self.stream_text and event.text:
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self._last_char = event.text[-1]

    def _on_StepStarted(self, event) -> None:
        if event.step > 1 and self._last_char != "\n" and self.stream_text:
            sys.stdout.write("\n")
            self._last_char = "\n"

    def _on_AssistantMessageStored(self, event) -> None:
        if event.text:
            self.texts.append(event.text)

    # -- tools
    def _on_ToolStarted(self, event) -> None:
        self.tool_calls.append({"id": event.call_id, "name": event.name, "arguments": event.arguments,
                                "status": "started"})
        err(f"→ {event.name} {_argument_preview(event.arguments)}".rstrip())

    def _on_ToolFinished(self, event) -> None:
        entry = next((c for c in self.tool_calls if c["id"] == event.call_id), None)
        if entry is None:  # a result for a call that never "started" (e.g. denied up front)
            entry = {"id": event.call_id, "name": event.name, "arguments": {}}
            self.tool_calls.append(entry)
        entry.update(status=event.status, ok=event.ok, content=event.content,
                     duration_s=round(event.duration_s, 3), vault_handle=event.vault_handle)
        mark = "✓" if event.ok else "✗"
        detail = "" if event.ok else ": " + one_line(event.content, ARG_PREVIEW_CHARS)
        err(f"{mark} {event.name} {event.status} ({event.duration_s:.1f}s){detail}")

    def _on_ApprovalRequest(self, event) -> None:
        if event.decision is not None and not event.decision.done():
            event.decision.set_result(False)
        err(f"denied (headless, policy ask): {event.summary} — rerun with --approve auto-edit|yolo "
            "to allow")

    # -- notes, usage, end
    def _on_Notice(self, event) -> None:
        err(f"{event.level}: {event.text}")

    def _on_RetryEvent(self, event) -> None:
        err(f"retry {event.attempt}/{event.max_attempts} in {event.delay_s:.1f}s: {event.reason}")

    def _on_UsageEvent(self, event) -> None:
        for key in ("prompt_tokens", "completion_tokens", "cached_read_tokens", "cached_write_tokens"):
            self.usage[key] += getattr(event, key) or 0
        if event.cost is not None:
            self.usage["cost"] = (self.usage["cost"] or 0.0) + event.cost

    def _on_TurnError(self, event) -> None:
        self.error = {"error_class": event.error_class, "message": event.message, "hint": event.hint}
        self.finish_stdout()
        err(f"error: {event.message} {event.hint}".rstrip())

    def _on_TurnFinished(self, event) -> None:
        self.finish_reason = event.reason
        if event.reason == "tool_limit":
            err(f"note: stopped after {event.steps} model calls (max_steps); continue with "
                f"`myrm run --session {self.session_id[:12]} ...` or raise --max-steps.")

    def crash(self, exc: Exception) -> None:
        self.error = {"error_class": type(exc).__name__, "message": str(exc) or type(exc).__name__,
                      "hint": "This is a bug in myrm; the session is kept. Please report it."}
        self.finish_stdout()
        err(f"error: {self.error['message']} {self.error['hint']}")

    def finish_stdout(self) -> None:
        """End streamed text with a newline so the shell prompt starts on its own line."""
        if self.stream_text and self._last_char != "\n":
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._last_char = "\n"

    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.error is not None or self.finish_reason == "error":
            return EXIT_TURN_ERROR
        return EXIT_OK

    def as_json(self) -> dict[str, Any]:
        reason = "interrupted" if self.interrupted else self.finish_reason
        return {
            "session_id": self.session_id,
            "model": self.model,
            "text": "\n\n".join(self.texts),
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "finish_reason": reason,
            "error": self.error,
        }


def _argument_preview(arguments: dict[str, Any]) -> str:
    for key in ("command", "path", "file_path", "pattern", "query", "handle"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return one_line(value, ARG_PREVIEW_CHARS)
    return one_line(json.dumps(arguments, ensure_ascii=False), ARG_PREVIEW_CHARS) if arguments else ""
