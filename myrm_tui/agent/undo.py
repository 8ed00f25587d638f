"""Undo and rewind of file changes, from the CHECKPOINT events (agent/checkpoints.py).

A plan names, per file, the bytes to put back (the earliest pre-image of the turns undone) and
the bytes the last of those turns left. A file whose current content is not what the turn left
was changed since (by the user, another program, a later uncovered bash call): it is a conflict,
and applying refuses unless forced, so an undo never silently clobbers someone's later edit.
Applying records an UNDO event (the log stays append-only); undone turns are skipped by the next
plan, so `/undo` twice walks back two turns.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from myrm_tui.agent.checkpoints import FileChange, changes_of, sha256_of
from myrm_tui.agent.tools.diffs import unified_diff
from myrm_tui.atomic_write import atomic_write
from myrm_tui.store import event_kinds

# Files larger than this are restored but not diffed in the preview (a diff of megabytes helps
# nobody and would stall the dialog).
PREVIEW_MAX_BYTES = 512 * 1024


class UndoConflict(Exception):
    """Some files changed since the turn wrote them; the message lists them."""


@dataclass(frozen=True)
class FileRestore:
    path: str
    before: str | None  # vault handle to restore; None: remove the file (the turn created it)
    expected: str | None  # sha256 the turn left; None: the turn removed it
    current: str | None  # sha256 now
    diff: str  # current → restored, for the preview

    @property
    def conflict(self) -> bool:
        return self.current != self.expected

    @property
    def action(self) -> str:
        if self.before is None:
            return "delete"
        return "recreate" if self.current is None else "restore"


@dataclass(frozen=True)
class UndoPlan:
    turns: tuple[int, ...]  # user message ids of the turns undone, oldest first
    files: tuple[FileRestore, ...]

    @property
    def conflicts(self) -> tuple[FileRestore, ...]:
        return tuple(f for f in self.files if f.conflict)

    @property
    def empty(self) -> bool:
        return not self.files


def _lineage(store: Any, session_id: str) -> list[tuple[str, int | None]]:
    """(session, last message id of its history that `session_id` shares) up the fork chain:
    a fork's history includes its parents' turns up to the fork point, so their changes too."""
    chain: list[tuple[str, int | None]] = []
    limit: int | None = None
    current: str | None = session_id
    while current is not None and len(chain) < 1000:
        record = store.get_session(current)
        chain.append((current, limit))
        if record.fork_message_id is not None:
            limit = record.fork_message_id if limit is None else min(limit, record.fork_message_id)
        current = record.parent_id
    return chain


def open_changes(store: Any, session_id: str) -> list[FileChange]:
    """Recorded changes of the turns in this session's history (fork ancestry included) that
    were not undone yet (by an undo in any session of the chain: those files were restored)."""
    chain = _lineage(store, session_id)
    done = {int(t) for sid, _ in chain for e in store.events(sid, event_kinds.UNDO) for t in e.data.get("turns", ())}
    changes = [c for sid, limit in chain for c in changes_of(store, sid) if limit is None or c.turn <= limit]
    return sorted((c for c in changes if c.turn not in done), key=lambda c: c.event_id)


def _resolve(workspace: Path, label: str) -> Path:
    path = Path(label)
    return path if path.is_absolute() else workspace / path


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _plan(store: Any, workspace: Path, changes: list[FileChange]) -> UndoPlan:
    by_path: dict[str, list[FileChange]] = {}
    for change in changes:
        by_path.setdefault(change.path, []).append(change)
    files = []
    for label, rows in sorted(by_path.items()):
        first, last = rows[0], rows[-1]
        path = _resolve(workspace, label)
        now = _read(path)
        restored = store.vault.read_bytes(first.before) if first.before else None
        big = max(len(now or b""), len(restored or b"")) > PREVIEW_MAX_BYTES
        diff = f"({label}: too large to preview)\n" if big else unified_diff(_text(now), _text(restored), label)
        files.append(FileRestore(label, first.before, last.after, sha256_of(path), diff))
    turns = tuple(sorted({c.turn for c in changes}))
    return UndoPlan(turns, tuple(files))


def plan_last(store: Any, session_id: str, workspace: Path) -> UndoPlan:
    """Undo of the latest turn that changed files and was not undone yet."""
    changes = open_changes(store, session_id)
    if not changes:
        return UndoPlan((), ())
    last = max(c.turn for c in changes)
    return _plan(store, workspace, [c for c in changes if c.turn == last])


def plan_rewind(store: Any, session_id: str, workspace: Path, message_id: int) -> UndoPlan:
    """Files back to how they were before the turn of user message `message_id` began."""
    return _plan(store, workspace, [c for c in open_changes(store, session_id) if c.turn >= message_id])


def apply(plan: UndoPlan, store: Any, session_id: str, workspace: Path, *, force: bool = False) -> list[str]:
    """Restore the plan's files; lines saying what was done. UndoConflict (nothing touched) when a
    file changed since its turn and `force` is false. The files are hashed again here: an edit
    made while the preview was open counts too."""
    fresh = UndoPlan(
        plan.turns, tuple(dataclasses.replace(f, current=sha256_of(_resolve(workspace, f.path))) for f in plan.files)
    )
    if fresh.conflicts and not force:
        raise UndoConflict(conflict_message(fresh))
    done = []
    for item in fresh.files:
        path = _resolve(workspace, item.path)
        if item.before is None:
            if path.is_file():
                path.unlink()
            done.append(f"deleted {item.path} (the turn created it)")
        else:
            atomic_write(path, store.vault.read_bytes(item.before))  # the user's file keeps its mode
            done.append(f"{'recreated' if item.current is None else 'restored'} {item.path}")
    store.append_event(
        session_id,
        event_kinds.UNDO,
        {"turns": list(plan.turns), "paths": [f.path for f in plan.files], "forced": force},
    )
    return done


def conflict_message(plan: UndoPlan) -> str:
    names = ", ".join(f.path for f in plan.conflicts)
    return (
        f"changed since the turn wrote them: {names}. Undo would overwrite those edits; "
        "nothing was restored (force it to overwrite)."
    )


def summary(plan: UndoPlan) -> str:
    """One line per file, for the preview's head."""
    lines = []
    for item in plan.files:
        mark = " (changed since: your edits would be lost)" if item.conflict else ""
        lines.append(f"{item.action} {item.path}{mark}")
    return "\n".join(lines)
