"""`myrm run`: one turn without the TUI, for scripts and CI.

Headless never blocks on a question: the agent (built with `headless=True`) refuses every call
that would need a yes, with the policy and reason that applied and a flag only when one would
help. Ctrl+C cancels the turn task, so the agent gets to store a synthetic result for
every unanswered tool call before the process exits with 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_TURN_ERROR,
    EXIT_USAGE,
    bootstrap,
    built_in_model,
    err,
    onboarding_message,
    open_store,
    refuse_unknown_model,
    resolve_model,
    with_value,
)
from myrm_tui.cli_commands.run.report import RunReport
from myrm_tui.context.prompt import NothingWorthCompacting
from myrm_tui.terminal_text import for_terminal

if TYPE_CHECKING:  # types only: the modules load when a run needs them, after argument parsing
    from myrm_tui.agent.agent import Agent
    from myrm_tui.agent.session_runtime import SessionRuntime
    from myrm_tui.context.compaction.prepared_summaries import PrepareProgress
    from myrm_tui.llm.local.client import LocalWorkers
    from myrm_tui.mcp.manager import McpManager
    from myrm_tui.settings.settings import Settings
    from myrm_tui.store.store import Store

__all__ = ["RunReport", "run_command"]

TITLE_CHARS = 60  # a session title is the prompt's start; 60 chars fit a list row


def run_command(prompt: str, *, json_out: bool, model: str | None, **options: Any) -> int:
    """With --json, stdout is always exactly one JSON object: the turn's, or an error object when
    the run stopped before a turn could run (usage errors, an unknown model, a busy session).
    A reader that leaves early (`| head -1`) ends the run quietly with EXIT_BROKEN_PIPE."""
    try:
        return _run_command_once(prompt, json_out=json_out, model=model, **options)
    except BrokenPipeError:  # a write outside the turn (a note, the --json object) found no reader
        quiet_closed_output()
        return EXIT_BROKEN_PIPE


def quiet_closed_output() -> None:
    """Point stdout and stderr at /dev/null once a reader has left: nothing later (a note, Python's
    own flush at exit) fails on the closed pipe or prints a traceback about it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def _run_command_once(
    prompt: str, *, json_out: bool, model: str | None, stream_json: bool = False, **options: Any
) -> int:
    if not (json_out or stream_json):
        return _run_command(prompt, json_out=False, model=model, **options)
    with _StreamWatch(sys.stdout) as stdout, _StreamWatch(sys.stderr) as stderr:
        code = _run_command(prompt, json_out=json_out, model=model, stream_json=stream_json, **options)
    if not stdout.written:
        lines = [line for line in "".join(stderr.text).splitlines() if line.strip()]
        message = next(
            (line.removeprefix("error: ") for line in lines if line.startswith("error: ")),
            lines[-1] if lines else "the run stopped before a turn could start",
        )
        error = _error_json(model, message, code)  # stream-json: the same document as its `result` line
        output.answer_json(json.dumps({"type": "result", **error} if stream_json else error, ensure_ascii=False))
    return code


class _StreamWatch:
    """Passes writes through to a stream and remembers them (to know whether stdout got the JSON,
    and what stderr said when it did not)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.text: list[str] = []
        self.written = False

    def __enter__(self) -> Self:
        self._saved = (sys.stdout, sys.stderr)
        if self.stream is sys.stdout:
            sys.stdout = self
        else:
            sys.stderr = self
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self._saved

    def write(self, text: str) -> int:
        if text:
            self.written = True
            self.text.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _error_json(model: str | None, message: str, code: int) -> dict[str, Any]:
    return {
        "session_id": None,
        "model": model,
        "text": "",
        "tool_calls": [],
        "usage": None,
        "finish_reason": "error",
        "exit_code": code,
        "error": {"error_class": "UsageError" if code == EXIT_USAGE else "Error", "message": message, "hint": ""},
    }


def _run_command(
    prompt: str,
    *,
    model: str | None,
    session: str | None,
    continue_last: bool,
    json_out: bool,
    approve: str | None,
    max_steps: int | None,
    compact: bool = False,
    trust: bool = False,
    fork: bool = False,
    images: Sequence[str] = (),
    stream_json: bool = False,
    local_workers: LocalWorkers | None = None,
    text_named: bool = False,
) -> int:
    """`text_named`: `--output-format text` was given (not the default), which `--json` contradicts."""
    if session and continue_last:
        err("error: use either --session ID or --continue, not both.")
        return EXIT_USAGE
    if json_out and (stream_json or text_named):
        named = "stream-json" if stream_json else "text"
        err(f"error: use either --json or --output-format {named}, not both.")
        return EXIT_USAGE
    if fork and not (session or continue_last):
        err("error: --fork needs the session to fork: add --session ID or --continue.")
        return EXIT_USAGE
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        err("error: the prompt is empty; pass it as an argument or use `-` to read stdin.")
        return EXIT_USAGE
    prompt, model = _custom_command(prompt, model, trust)
    from myrm_tui.agent.user_input.attachments import (
        AttachmentError,
        check_image_count,
        image_refs,
        load_image,
        message_content,
        named_outside,
    )
    from myrm_tui.settings.trust import ACCEPT_ANY

    context = bootstrap(
        {"model": model, "approval": approve, "max_steps": max_steps}, accept_workspace=ACCEPT_ANY if trust else None
    )
    if context is None:
        return EXIT_USAGE
    workspace_trust = context.loaded.workspace_trust
    if workspace_trust is not None and workspace_trust.needs_decision:
        # Headless cannot ask, and running with part of the repository's config silently
        # ignored would surprise whoever wrote it: stop and say how to decide.
        err(f"error: {workspace_trust.run_refusal()}")
        return EXIT_USAGE
    resolved = resolve_model(context.settings)
    if resolved is None:
        err(onboarding_message())
        return EXIT_USAGE
    settings, _source = resolved
    if refuse_unknown_model(settings):
        return EXIT_USAGE
    from myrm_tui.agent.user_input.attachments import attachment_chips, file_refs, load_attachments

    try:  # --image files and @name.png in the prompt, fenced like file_read, before anything is stored
        allow = bool(settings.allow_outside_workspace)
        # --image with a full path is the user's own choice (attachments.named_outside); a path
        # inside the prompt may come from anywhere and is fenced.
        wanted = {ref: allow for ref in image_refs(prompt, Path.cwd())}
        wanted.update({path: allow or named_outside(path) for path in images})
        check_image_count(len(wanted))
        attached = [
            load_image(path, Path.cwd(), workspace=context.workspace, allow_outside=outside)
            for path, outside in wanted.items()
        ]
    except AttachmentError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    try:  # @file and @folder in the prompt, read now (fenced like file_read), before anything is stored
        files = load_attachments(file_refs(prompt, Path.cwd()), Path.cwd(), context.workspace, settings)
    except AttachmentError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    for chip in attachment_chips(files, int(settings.tool_output_cap), settings.model):
        err(for_terminal(chip))
    from myrm_tui.llm.local.client import LocalWorkers
    from myrm_tui.llm.local.provider import start_worker
    from myrm_tui.store.store import StoreError

    # The run owns the embedded model's worker; a `local/...` model starts loading now, before
    # the store opens (or already did, at the entry point: `early_worker.py`; a worker started
    # there with another key is replaced here), and stops when the run ends (the `finally` below).
    if local_workers is None:
        local_workers = LocalWorkers()
    start_worker(local_workers, settings.model, int(settings.local_threads))
    store = open_store(context.workspace)
    if store is None:
        local_workers.close()
        return EXIT_USAGE
    try:
        try:
            existing = {s.id for s in store.list_sessions()}
            session_id = _choose_session(store, session, continue_last, settings.model, prompt, fork)
        except StoreError as exc:
            err(f"error: {exc}")
            return EXIT_USAGE
        settings = _with_session_model(context.settings, settings, store.get_session(session_id).model)
        from myrm_tui.agent.setup.window_check import window_problem

        too_small = _missing_key(settings) or window_problem(settings, context.workspace)  # before anything is stored
        if too_small is not None:
            err(f"error: {too_small}")
            if session_id not in existing:
                store.delete_session(session_id)
            return EXIT_USAGE
        from myrm_tui.agent.session_runtime import SessionRuntime
        from myrm_tui.llm.stream import StreamWithLocalWorkers

        mcp = _mcp_servers(settings, context.workspace)
        runtime = SessionRuntime(
            store=store,
            session_id=session_id,
            workspace=context.workspace,
            mcp=mcp,
            headless=True,
            stream_fn=StreamWithLocalWorkers(local_workers),
        )
        agent = runtime.agent_for(settings)
        report = _report(session_id, settings.model, json_out, store if stream_json else None)
        content = message_content(prompt, attached, files) if (attached or files) else prompt
        asyncio.run(_drive_with_servers(runtime.send(content), report, mcp, runtime))
        report.finish_stdout()
        if compact and report.exit_code() == 0 and not _compact(agent):
            report.interrupted = True
        if session_id not in existing and report.exit_code() == EXIT_TURN_ERROR:
            _drop_if_nothing_to_resume(store, session_id, report)
        if json_out:
            output.answer_json(json.dumps(report.as_json(), ensure_ascii=False))
        if stream_json:
            from myrm_tui.cli_commands.run.stream_json import StreamJsonReport

            if isinstance(report, StreamJsonReport):
                report.result(report.exit_code())
        return report.exit_code()
    finally:
        store.close()
        local_workers.close()


def _report(session_id: str, model: str, json_out: bool, stream_to: Store | None) -> RunReport:
    """--output-format stream-json prints JSON lines (stream_json.py, reading compactions from the
    store); otherwise the text streams unless --json."""
    if stream_to is not None:
        from myrm_tui.cli_commands.run.stream_json import StreamJsonReport

        return StreamJsonReport(session_id=session_id, model=model, stream_text=False, store=stream_to)
    return RunReport(session_id=session_id, model=model, stream_text=not json_out)


def _custom_command(prompt: str, model: str | None, trust: bool) -> tuple[str, str | None]:
    """`myrm run "/NAME args"` runs a custom command (tui/prompt/custom_commands.py) like the chat does:
    its text is the prompt and its `model` applies unless --model names one (a workspace command's
    model only in a trusted workspace, or with --trust). Anything else starting with "/" is an
    ordinary prompt, as before."""
    if not prompt.lstrip().startswith("/"):
        return prompt, model
    from myrm_tui.settings.paths import user_config_dir
    from myrm_tui.store.workspace import find_workspace_root
    from myrm_tui.tui.prompt.custom_commands import command_model, load_custom_commands, workspace_trusted
    from myrm_tui.tui.prompt.slash_commands import SLASH_COMMANDS, SlashCommand, parse_command

    root = find_workspace_root()
    custom = load_custom_commands(root, user_config_dir(), [c.name for c in SLASH_COMMANDS])
    parsed = parse_command(
        prompt, [SlashCommand(c.name, c.argument_hint, c.help, str(c.path)) for c in custom.commands]
    )
    command = custom.get(parsed.name) if parsed is not None and parsed.command is not None else None
    if command is None or parsed is None:
        return prompt, model
    chosen, refused = command_model(
        command, trust or (bool(command.model) and workspace_trusted(root, user_config_dir()))
    )
    err(
        for_terminal(
            f"note: {command.name} from {command.path}" + (f", model {chosen}" if chosen and not model else "")
        )
    )
    if refused:
        err(for_terminal(f"note: {refused}"))
    return command.expand(parsed.argument), model or chosen or None


def _with_session_model(loaded: Settings, settings: Settings, session_model: str | None) -> Settings:
    """`--continue` / `--session`: the session keeps its own model unless this run names one, or
    unless the user could not have chosen it (settings.model_for_session, the same rule as the TUI:
    a stored model is data from `.myrm/sessions.db`; a line on stderr says when it is set aside).
    The model resolved before the session was picked is the fallback, so the notice is never lost."""
    from myrm_tui.settings.model_choice import choose_model

    chosen = choose_model(loaded, session_model, fallback=lambda: settings.model or None, built_in=built_in_model)
    if chosen is not None and chosen.notice:
        err(f"note: {chosen.notice}")
    if chosen is None or chosen.model == settings.model:
        return settings
    return with_value(settings, "model", chosen.model, chosen.source)


def _missing_key(settings: Settings) -> str | None:
    """One line when the model's provider needs a key that is not set (llm/models/check.py): a
    configuration error, said before anything is stored or sent, instead of a failed turn."""
    from myrm_tui.llm.models.check import check_model

    return check_model(settings.model, settings.models, settings.api_base or None).key_problem()


def _drop_if_nothing_to_resume(store: Store, session_id: str, report: RunReport) -> None:
    """A new session whose only content is the prompt of a failed run is not worth resuming
    (the prompt is still in the user's shell): remove it, so `sessions list` stays honest."""
    rows = store.messages(session_id)
    if any(row.role != "user" for row in rows) or len(rows) > 1:
        return
    try:
        store.delete_session(session_id)
    except Exception:  # noqa: BLE001 - keeping an extra session is harmless; say nothing
        return
    report.session_id = ""
    err("note: nothing was stored (the failed run's new session was removed); fix the error and run again.")


def _compact(agent: Agent) -> bool:
    """`--compact`: after the turn, everything outside the latest exchange becomes summary nodes
    (written by the summarizer model when there is one; a line per summary on stderr while it
    writes). False when Ctrl+C cancelled it (the prompt is then unchanged)."""

    def progress(step: PrepareProgress) -> None:
        if step.what != "done":
            what = "summary" if step.what == "leaf" else "fold"
            err(f"compacting: writing {what} {step.done + 1} of {max(step.total, step.done + 1)}…")

    try:
        event = asyncio.run(agent.compact_now(progress=progress))
    except KeyboardInterrupt:
        err("note: compaction cancelled; the prompt is unchanged (summaries already written are kept).")
        return False
    except NothingWorthCompacting as exc:
        err(f"note: {exc}")
        return True
    except Exception as exc:  # noqa: BLE001 - the turn is stored; say what failed
        err(f"note: compaction failed: {exc}")
        return True
    if event is None:
        err("compacted: nothing outside the latest exchange to summarize")
        return True
    summaries = event.get("summaries") or {}
    made = sum(int(n) for n in (summaries.get("created_by_depth") or {}).values())
    extractive = int(summaries.get("fallback") or 0)
    err(
        f"compacted: {event['tokens_before']:,} → {event['tokens_after']:,} tokens "
        f"({event['items']} messages into {made} summar{'y' if made == 1 else 'ies'}: "
        f"{made - extractive} written by the model, {extractive} extractive)"
    )
    return True


def _choose_session(
    store: Store, session: str | None, continue_last: bool, model: str, prompt: str, fork: bool = False
) -> str:
    """The session this run writes, claimed for this process (one writer per session).

    `--session ID` that another process is writing is refused (SessionBusyError) unless
    `--fork`; `--continue` forks a busy latest session by itself (store/busy_fork.py).
    """
    from myrm_tui.store.busy_fork import open_for_writing

    chosen = None
    if session:
        chosen = store.get_session(session)
    elif continue_last:
        chosen = store.latest_session()
        if chosen is None:
            err("note: no earlier session in this workspace; starting a new one.")
    if chosen is not None:
        writable = open_for_writing(store, chosen, fork=fork, fork_if_busy=continue_last)
        notice = writable.notice()
        if notice:
            err(f"note: {notice}")
        elif writable.forked_from:
            err(f"note: forked session {writable.forked_from} into {writable.session_id}.")
        if writable.session_id is not None:
            return writable.session_id
    from myrm_tui.sinks import session_title

    return store.create_session(model=model, title=session_title(prompt, TITLE_CHARS)).id


def _mcp_servers(settings: Settings, workspace: Path) -> McpManager | None:
    """The run's MCP servers (None without any configured: the SDK is then never imported)."""
    if not settings.mcp_servers:
        return None
    from myrm_tui.mcp.manager import McpManager

    return McpManager.from_settings(settings, workspace)


async def _drive_with_servers(
    events: AsyncIterator[Any], report: RunReport, mcp: McpManager | None, runtime: SessionRuntime | None = None
) -> None:
    """MCP servers live as long as the turn's event loop: the turn starts them (and waits for them
    before its first model call); they are stopped here however the turn ended, so no server
    process outlives `myrm run`. So are the agent's background commands, said on stderr."""
    try:
        await _drive(events, report)
    finally:
        if runtime is not None:
            stopped = await runtime.aclose()
            if stopped:
                named = ", ".join(f"{info.handle} ({info.command})" for info in stopped)
                note = f"note: stopped {len(stopped)} background command(s) still running at the end: {named}"
                err(for_terminal(note))
            for notice in runtime.take_hook_notices():  # a session_end hook that failed
                err(for_terminal(f"warning: {notice.text}"))
        if mcp is not None:
            await mcp.aclose()


async def _drive(events: AsyncIterator[Any], report: RunReport) -> None:
    """Consume the turn in its own task so Ctrl+C can cancel exactly that task."""

    async def consume() -> None:
        async for event in events:
            try:
                report.handle(event)
            except BrokenPipeError:
                # The reader of our output left (`myrm run … | head -1`): stop like any Unix tool
                # does, but through the agent's own cancellation, so the session stays resumable.
                if not report.output_closed:
                    report.output_closed = True
                    quiet_closed_output()
                    task.cancel()

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
        report.interrupted = not report.output_closed
    except Exception as exc:  # noqa: BLE001 — an agent bug must still end with a readable line and exit 1
        report.crash(exc)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
