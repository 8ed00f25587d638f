"""Log records are redacted when they are created, whoever logs them.

Why a record factory rather than a logging.Filter: a logger's filters do not apply to records of
its child loggers, and litellm logs endpoint URLs and provider texts on its own loggers and
handlers; the factory sees every record before any handler does. Why its own module: `cli.main`
installs it first thing, and importing the redactor (a few dozen compiled patterns) is deferred
to the first record, so `myrm --help` stays instant.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

_lock = threading.Lock()
_state: dict[str, Any] = {}


def install() -> None:
    """Idempotent: wraps the current record factory once per process."""
    with _lock:
        if "factory" in _state:
            return
        previous = logging.getLogRecordFactory()
        busy = threading.local()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if getattr(busy, "on", False):  # a record logged while the redactor itself loads
                return record
            busy.on = True
            try:
                _scrub_record(record)
            except Exception:  # noqa: BLE001, S110 - logging must never fail the caller; the record goes as is
                pass
            finally:
                busy.on = False
            return record

        logging.setLogRecordFactory(factory)
        _state["factory"] = factory


def _scrub_record(record: logging.LogRecord) -> None:
    from myrm_tui.sinks import LOG, scrub

    message = record.getMessage()
    clean = scrub(LOG, message)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        # Handlers reuse exc_text when it is set, so the traceback they print is this one.
        record.exc_text = scrub(LOG, logging.Formatter().formatException(record.exc_info))
