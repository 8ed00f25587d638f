"""What the app leaves behind when it dies of an unhandled exception: a log file and one line.

Why: Textual ends the app on any unhandled exception (a handler, a timer, a worker) and prints
its traceback to the terminal once the screen is gone, where it scrolls away with the resume
hint under it, and the process still ended with `myrm`'s normal exit code. A crash must never
look like a quit: the traceback goes to `<log dir>/CRASH_LOG_NAME` (log_files.py: where logs
go, with secrets scrubbed), the command line says where in one line on stderr and exits
non-zero. Pure (no Textual): the app hands over the exception, the command line prints.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.log_files import append_log
from myrm_tui.sinks import LOG, scrub
from myrm_tui.terminal_text import for_terminal

# The file under the log folder that collects the TUI's crash tracebacks (appended, rotated by
# log_files.append_log).
CRASH_LOG_NAME = "tui-crash.log"
# Characters of the exception's own message quoted on the stderr line: enough to recognise it,
# the whole of it is in the log.
QUOTED_MESSAGE_CHARS = 200


@dataclass(frozen=True)
class CrashReport:
    """An unhandled exception, as the user is told about it."""

    summary: str  # "RuntimeError: what it said", scrubbed, one line
    log_path: Path | None  # None: the log folder was not writable (the traceback is then printed)
    details: str  # the whole traceback, scrubbed


def original_error(error: BaseException) -> BaseException:
    """The exception a worker died of: Textual wraps it in WorkerFailed (its `error`), which
    carries no traceback of its own."""
    inner = getattr(error, "error", None)
    return inner if isinstance(inner, BaseException) else error


def report_crash(error: BaseException) -> CrashReport:
    """Write the traceback of `error` to the crash log and say what happened."""
    cause = original_error(error)
    text = "".join(traceback.format_exception(type(cause), cause, cause.__traceback__))
    if cause is not error:
        text = f"{type(error).__name__} in a background task of the app:\n{text}"
    details = scrub(LOG, text)
    message = " ".join(str(cause).split())
    if len(message) > QUOTED_MESSAGE_CHARS:
        message = message[: QUOTED_MESSAGE_CHARS - 1] + "…"
    summary = for_terminal(scrub(LOG, f"{type(cause).__name__}: {message}" if message else type(cause).__name__))
    return CrashReport(summary, append_log(CRASH_LOG_NAME, details), details)


def crash_message(report: CrashReport, resume: str | None) -> str:
    """The stderr text after a crash: what, where the traceback is, how to come back."""
    where = (
        f"The traceback is in {for_terminal(str(report.log_path))}; please attach it to a bug report."
        if report.log_path is not None
        else f"The log folder is not writable; the traceback:\n{for_terminal(report.details)}"
    )
    lines = [f"myrm crashed ({report.summary}). {where}"]
    if resume:
        lines.append(resume)
    return "\n".join(lines)
