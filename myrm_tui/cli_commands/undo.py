"""`myrm undo`: restore the files the last turn changed, without the TUI.

Why it asks only on a terminal: a script piping into myrm cannot answer, and `--yes` is how a
person says "no question" up front; without a terminal the preview is still printed first, so
the log shows what was restored. A file changed since the turn wrote it is never overwritten
without `--force` (exit 1, nothing touched). The preview names each file as it will be restored
(workspace-relative) and each recorded change undo leaves alone, with the reason (outside the
workspace, protected: skipped; a link on the way: exit 1, nothing touched, even with `--force`;
agent/undo/rewind.py).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import EXIT_OK, EXIT_TURN_ERROR, EXIT_USAGE, bootstrap, err, open_store

if TYPE_CHECKING:
    from myrm_tui.store.records import SessionRecord
    from myrm_tui.store.store import Store


def _say(text: str) -> None:
    output.say(text)  # paths and file contents are workspace data


def _confirm(question: str) -> bool:
    output.ask(question)
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _latest_with_changes(store: Store) -> SessionRecord | None:
    """Without --session: the most recent session that has file changes left to undo (a later
    session that only talked changed nothing to undo), said on stderr when it is not the latest.
    The latest session when none has any (its "nothing left to undo" is then the true answer)."""
    from myrm_tui.agent.undo.rewind import open_changes

    latest = store.latest_session()
    if latest is None or open_changes(store, latest.id):
        return latest
    # Never one dated after the latest: that is a session dated in the future (latest_session).
    earlier = [c for c in store.list_sessions() if c.id != latest.id and c.updated_at <= latest.updated_at]
    for candidate in earlier:
        if open_changes(store, candidate.id):
            title = f" “{candidate.title}”" if candidate.title else ""
            err(
                f"note: the latest session ({latest.id}) has no file changes to undo; using session "
                f"{candidate.id}{title}, the latest that has (--session ID picks another)."
            )
            return candidate
    return latest


def undo_command(*, session: str | None, yes: bool, force: bool) -> int:
    from myrm_tui.agent.undo import rewind as undo
    from myrm_tui.store.errors import StoreError, VaultError

    context = bootstrap(quiet=True)
    if context is None:
        return EXIT_USAGE
    store = open_store(context.workspace)
    if store is None:
        return EXIT_TURN_ERROR
    try:
        record = store.get_session(session) if session else _latest_with_changes(store)
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
        if plan.blocked:
            err("error: " + undo.blocked_message(plan))
            return EXIT_TURN_ERROR
        if plan.conflicts and not force:
            err("error: " + undo.conflict_message(plan).replace("force it", "add --force"))
            return EXIT_TURN_ERROR
        question = (
            f"Restore {len(plan.files)} file(s)? [y/N]"
            if plan.files
            else "Nothing here can be restored; mark the turn undone so the next undo goes further back? [y/N]"
        )
        if not yes and sys.stdin.isatty() and not _confirm(question):
            err("nothing restored.")
            return EXIT_OK
        store.claim_session(record.id)
        for line in undo.apply(plan, store, record.id, context.workspace, force=force):
            _say(line)
        return EXIT_OK
    except (StoreError, VaultError, OSError, undo.UndoConflict) as exc:  # changed or blocked meanwhile
        err(f"error: {exc}")
        return EXIT_TURN_ERROR
    finally:
        store.close()
