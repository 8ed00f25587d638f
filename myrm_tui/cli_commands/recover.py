"""`myrm sessions recover`: copy what a damaged store still holds into a new one.

Kept apart from sessions.py (which only reads): this is the one sessions command that replaces
the database file, and it says first what is wrong, then what it saved and where the old file is.
"""

from __future__ import annotations

from myrm_tui.cli_commands.common import EXIT_OK, EXIT_TURN_ERROR, EXIT_USAGE, bootstrap, err
from myrm_tui.cli_commands.output import say

# Tables named in the summary line, in reading order (the rest are engine bookkeeping).
_MAIN_TABLES = ("sessions", "messages", "events", "summaries", "artifacts")


def recover_command(force: bool) -> int:
    from myrm_tui.store.database.session_lock import StoreBusyError
    from myrm_tui.store.recovery.health import inspect
    from myrm_tui.store.recovery.recover import recover
    from myrm_tui.store.store import StoreError

    context = bootstrap(quiet=True)
    if context is None:
        return EXIT_USAGE
    health = inspect(context.workspace)
    if not health.exists:
        err(f"error: there is no session database at {health.db_path}; nothing to recover.")
        return EXIT_USAGE
    if health.size_bytes == 0:
        err(f"error: {health.problem}")
        return EXIT_USAGE
    if health.healthy and not force:
        say(f"{health.db_path} passes PRAGMA quick_check: nothing to recover (--force rebuilds it anyway).")
        return EXIT_OK
    if health.problem:
        say(f"problem: {health.problem}")
    for line in health.damage:
        say(f"quick_check: {line}")
    try:
        report = recover(context.workspace)
    except StoreBusyError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    except StoreError as exc:
        err(f"error: {exc}")
        return EXIT_TURN_ERROR
    restored = ", ".join(f"{report.restored[t]} {t}" for t in _MAIN_TABLES)
    others = sum(n for t, n in report.restored.items() if t not in _MAIN_TABLES)
    say(f"recovered with {report.method}: {restored}, {others} engine rows")
    if report.placeholders:
        say(
            f"re-created {report.placeholders} session rows that were lost (their messages survived; "
            "titled “(recovered…)”)"
        )
    lost = sum(report.lost.values())
    if lost or report.unplaced:
        parts = [f"{n} {t}" for t, n in sorted(report.lost.items()) if n]
        if report.unplaced:
            parts.append(f"{report.unplaced} rows SQLite could not place in any table")
        say("not recovered (unreadable or invalid): " + ", ".join(parts))
    if report.dangling_references:
        say(
            f"{report.dangling_references} references point at rows that were lost "
            "(e.g. a fork point); those sessions still open"
        )
    say(f"the old file is kept as {report.kept_as}")
    return EXIT_OK
