"""Where myrm writes diagnostic logs (child process stderr, crash reports).

Why files and not stderr: while the TUI owns the terminal, anything printed to stderr lands in
the middle of the screen; and `myrm run` keeps stderr for lines meant for the user. Crash details
(the native stack of a model worker, say) go to a file that error messages and `myrm doctor` name.

Why it follows `MYRM_CONFIG_DIR`: tests and throwaway runs set that variable to isolate the user's
files, and logs must be isolated the same way. A package-root module because every layer that
starts a child process (llm, agent) needs it and none of them should import another's settings.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

LOG_DIR_ENV = "MYRM_LOG_DIR"
# A log that only grows would fill a disk over months of crashes; past this size it is rotated
# once (the previous file is kept as `.1`), which keeps the latest crash and the one before.
MAX_LOG_BYTES = 1_000_000


def log_dir() -> Path:
    explicit = os.environ.get(LOG_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    config = os.environ.get("MYRM_CONFIG_DIR", "").strip()
    if config:
        return Path(config).expanduser() / "logs"
    import platformdirs

    return Path(platformdirs.user_log_dir("myrm"))


def append_log(name: str, text: str) -> Path | None:
    """Append a timestamped block to `<log dir>/<name>`; None when the folder is not writable
    (a log is never worth failing the caller for)."""
    from myrm_tui.sinks import LOG, scrub  # a log outlives the session and gets attached to reports

    text = scrub(LOG, text)
    path = log_dir() / name
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            path.replace(path.with_name(path.name + ".1"))
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()}\n{text.rstrip()}\n")
    except OSError:
        return None
    return path
