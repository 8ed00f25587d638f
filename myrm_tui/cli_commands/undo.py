"""`myrm undo`: restore the files the last turn changed, without the TUI.

Why it asks only on a terminal: a script piping into myrm cannot answer, and `--yes` is how a
person says "no question" up front; without a terminal the preview is still printed first, so
the log shows what was restored. A file changed since the turn wrote it is never overwritten
without `--force` (exit 1, nothing touched).
"""

from __future__ import annotations

import sys

from myrm_tui.cli_commands.common import EXIT_OK, EXIT_TURN_ERROR, EXIT_USAGE, bootstrap, err, open_store
from myrm_tui.terminal_text import for_terminal


def _say(text: str) -> None:
    print(for_terminal(text), flush=True)  # paths and file contents are workspace data


def _confirm(question: str) -> bool:
    print(question, end=" ", file=sys.stderr, flush=True)
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def undo_command(*, session: str | None, yes: bool, force: bool) -> int:
    from myrm_tui.agent import undo
    from myrm_tui.store.errors import StoreError, VaultError

    context = bootstrap(quiet=True)
    if context is None:
        return EXIT_USAGE
    store = open_store(context.workspace)
    if store is None:
        return EXIT_TURN_ERROR
    try:
        record = store.get_session(session) if session else store.latest_session()
        if record is None:
            err("no sessions in this workspace yet; nothing to undo.")
            return EXIT_OK
        plan = undo.plan_last(store, record.id, context.workspace)
        if plan.empty:
            err(
                f"session {record.id}: no file changes left to undo (bash changes are only recorded "
                "in a git workspace)."
            )
            return EXIT_OK
        _say(f"session {record.id}: undo the file changes of the turn msg:{plan.turns[-1]}")
        _say(undo.summary(plan))
        for item in plan.files:
            _say(item.diff.rstrip("\n"))
        if plan.conflicts and not force:
            err("error: " + undo.conflict_message(plan).replace("force it", "add --force"))
            return EXIT_TURN_ERROR
        if not yes and sys.stdin.isatty() and not _confirm(f"Restore {len(plan.files)} file(s)? [y/N]"):
            err("nothing restored.")
            return EXIT_OK
        store.claim_session(record.id)
        for line in undo.apply(plan, store, record.id, context.workspace, force=force):
            _say(line)
        return EXIT_OK
    except (StoreError, VaultError, OSError) as exc:
        err(f"error: {exc}")
        return EXIT_TURN_ERROR
    finally:
        store.close()
