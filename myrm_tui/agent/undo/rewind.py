"""Undo and rewind of file changes, from the CHECKPOINT events (agent/undo/checkpoints.py).

A plan names, per file, the bytes to put back (the earliest pre-image of the turns undone) and
the bytes the last of those turns left. A file whose current content is not what the turn left
was changed since (by the user, another program, a later uncovered bash call): it is a conflict,
and applying refuses unless forced, so an undo never silently clobbers someone's later edit.
Applying records an UNDO event (the log stays append-only); undone turns are skipped by the next
plan, so `/undo` twice walks back two turns.

Every target is fenced again when it is planned and again when it is restored, because the events
and the tree are both outside myrm's control: a session log may arrive with a clone, and a bash
call may have turned a folder into a link to ~/.ssh since the turn. Only files inside the
workspace are restored, each reached by a no-follow walk from the workspace handle
(myrm_tui/fenced_files.py). An absolute or `..` path in an event, or a protected path, can never
be restored: it is skipped, and the preview says which and why. A link (or a file where a folder
belongs) on the way, or as the file, blocks the whole undo, forced or not (UndoBlocked, nothing
touched): the user can remove it and undo again, and a partial restore would mark the turn done
with its files still missing. The conflict check reads each file through the same handle the
restore then writes through.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.permissions.protected_paths import protection_of
from myrm_tui.agent.tools.files.diffs import unified_diff
from myrm_tui.agent.undo.checkpoints import FileChange, changes_of, sha256_hex
from myrm_tui.context.undo_note import undo_note
from myrm_tui.fenced_files import (
    FenceError,
    Folder,
    HeldFileError,
    Target,
    open_root,
    open_target,
    split_relative,
    user_file_mode,
)
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

# Files larger than this are restored but not diffed in the preview (a diff of megabytes helps
# nobody and would stall the dialog).
PREVIEW_MAX_BYTES = 512 * 1024


class UndoConflict(Exception):
    """Some files changed since the turn wrote them; the message lists them."""


class UndoBlocked(UndoConflict):
    """A link or a non-folder is on the way to a file (or is the file): nothing was restored,
    whatever `force` says; the message names it and what to do."""


@dataclass(frozen=True)
class FileRestore:
    path: str  # workspace-relative, "/"-separated: the file that is restored (shown in the preview)
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
class Skipped:
    """A recorded change undo will not touch, and why (shown in the preview and the result)."""

    path: str  # as the event named it
    reason: str
    blocking: bool = False  # a link on the way: the user can fix it, and the undo waits for that


@dataclass(frozen=True)
class UndoPlan:
    turns: tuple[int, ...]  # user message ids of the turns undone, oldest first
    files: tuple[FileRestore, ...]
    skipped: tuple[Skipped, ...] = ()

    @property
    def conflicts(self) -> tuple[FileRestore, ...]:
        return tuple(f for f in self.files if f.conflict)

    @property
    def blocked(self) -> tuple[Skipped, ...]:
        return tuple(s for s in self.skipped if s.blocking)

    @property
    def empty(self) -> bool:
        return not self.files and not self.skipped


class _Refused(Exception):
    """A recorded path undo will not restore; the message is the reason."""


def _lineage(store: Store, session_id: str) -> list[tuple[str, int | None]]:
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


def open_changes(store: Store, session_id: str) -> list[FileChange]:
    """Recorded changes of the turns in this session's history (fork ancestry included) that
    were not undone yet (by an undo in any session of the chain: those files were restored)."""
    chain = _lineage(store, session_id)
    done = {int(t) for sid, _ in chain for e in store.events(sid, event_kinds.UNDO) for t in e.data.get("turns", ())}
    changes = [c for sid, limit in chain for c in changes_of(store, sid) if limit is None or c.turn <= limit]
    return sorted((c for c in changes if c.turn not in done), key=lambda c: c.event_id)


def _names(label: str, workspace: Path) -> tuple[str, ...]:
    """The names of a recorded path below the workspace; _Refused (with the reason) when undo
    must not touch it."""
    if PurePosixPath(label).is_absolute():
        raise _Refused("outside the workspace (an absolute path); undo restores files inside the workspace only")
    try:
        names = split_relative(label)
    except ValueError:
        raise _Refused("leaves the workspace (a `..` in the path); undo restores files inside it only") from None
    if not names:
        raise _Refused("names the workspace folder itself, not a file")
    item = protection_of(workspace.resolve().joinpath(*names), workspace)
    if item is not None:
        raise _Refused(f"protected as {item.why}; undo never writes there")
    return names


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


def _look(root: Folder, names: tuple[str, ...]) -> tuple[Target | None, bytes | None]:
    """The file's folder (None when a folder on the way is missing) and its bytes now (None: no
    file). FenceError for a link or a non-folder on the way, or a link, folder or FIFO as the file."""
    try:
        target = open_target(root, names)
    except FileNotFoundError:
        return None, None
    try:
        found = target.lstat()
        return target, None if found is None else target.read_bytes()
    except FileNotFoundError:
        return target, None
    except BaseException:
        target.close()
        raise


def _plan(store: Store, workspace: Path, changes: list[FileChange]) -> UndoPlan:
    by_path: dict[str, list[FileChange]] = {}
    skipped: dict[str, Skipped] = {}
    for change in changes:
        try:
            label = "/".join(_names(change.path, workspace))
        except _Refused as exc:
            skipped.setdefault(change.path, Skipped(change.path, str(exc)))
            continue
        by_path.setdefault(label, []).append(change)
    files = []
    with open_root(workspace) as root:
        for label, rows in sorted(by_path.items()):
            first, last = rows[0], rows[-1]
            try:
                target, now = _look(root, tuple(label.split("/")))
            except (FenceError, HeldFileError, NotADirectoryError, IsADirectoryError) as exc:
                skipped[label] = Skipped(label, _fence_reason(exc), blocking=True)
                continue
            if target is not None:
                target.close()
            restored = store.vault.read_bytes(first.before) if first.before else None
            big = max(len(now or b""), len(restored or b"")) > PREVIEW_MAX_BYTES
            diff = f"({label}: too large to preview)\n" if big else unified_diff(_text(now), _text(restored), label)
            files.append(FileRestore(label, first.before, last.after, sha256_hex(now), diff))
    turns = tuple(sorted({c.turn for c in changes}))
    return UndoPlan(turns, tuple(files), tuple(skipped.values()))


def _fence_reason(exc: OSError) -> str:
    if isinstance(exc, HeldFileError):  # a hard link to the open store's database or a sidecar
        return "it is now a link to the session store this myrm process has open; undo never opens or replaces that"
    if isinstance(exc, FenceError):
        return f"{exc.fact}; undo never writes through a link or replaces one"
    return f"something on the way is not a folder ({exc.strerror or exc})"


def plan_last(store: Store, session_id: str, workspace: Path) -> UndoPlan:
    """Undo of the latest turn that changed files and was not undone yet."""
    changes = open_changes(store, session_id)
    if not changes:
        return UndoPlan((), ())
    last = max(c.turn for c in changes)
    return _plan(store, workspace, [c for c in changes if c.turn == last])


def plan_rewind(store: Store, session_id: str, workspace: Path, message_id: int) -> UndoPlan:
    """Files back to how they were before the turn of user message `message_id` began."""
    return _plan(store, workspace, [c for c in open_changes(store, session_id) if c.turn >= message_id])


def apply(plan: UndoPlan, store: Store, session_id: str, workspace: Path, *, force: bool = False) -> list[str]:
    """Restore the plan's files; lines saying what was done (and what was skipped, and why).
    UndoBlocked (nothing touched) when a link is on the way to one of them, forced or not;
    UndoConflict (nothing touched) when a file changed since its turn and `force` is false.

    Each file is fenced and hashed again here, through the folder handle its restore then writes
    through: an edit made, or a link planted, while the preview was open counts too."""
    skipped = [s for s in plan.skipped if not s.blocking]
    with open_root(workspace) as root, contextlib.ExitStack() as handles:
        checked: list[tuple[FileRestore, tuple[str, ...], Target | None]] = []
        for item in plan.files:
            try:
                names = _names(item.path, workspace)
                target, now = _look(root, names)
            except _Refused as exc:
                skipped.append(Skipped(item.path, str(exc)))
                continue
            except (FenceError, HeldFileError, NotADirectoryError, IsADirectoryError) as exc:
                skipped.append(Skipped(item.path, _fence_reason(exc), blocking=True))
                continue
            if target is not None:
                handles.callback(target.close)
            checked.append((dataclasses.replace(item, current=sha256_hex(now)), names, target))
        fresh = UndoPlan(plan.turns, tuple(item for item, _, _ in checked), tuple(skipped))
        if fresh.blocked:
            raise UndoBlocked(blocked_message(fresh))
        if fresh.conflicts and not force:
            raise UndoConflict(conflict_message(fresh))
        done: list[str] = []
        restored: list[str] = []
        for item, names, target in checked:
            try:
                line = _restore(store, root, item, names, target, handles)
            except (FenceError, HeldFileError, NotADirectoryError, IsADirectoryError) as exc:  # planted meanwhile
                skipped.append(Skipped(item.path, _fence_reason(exc), blocking=True))
                continue
            done.append(line)
            restored.append(item.path)
    done += [f"skipped {s.path}: {s.reason}" for s in skipped]
    store.append_event(
        session_id,
        event_kinds.UNDO,
        {
            "turns": list(plan.turns),
            "paths": restored,
            "forced": force,
            "skipped": [{"path": s.path, "reason": s.reason} for s in skipped],
        },
    )
    return done


def _restore(
    store: Store,
    root: Folder,
    item: FileRestore,
    names: tuple[str, ...],
    target: Target | None,
    handles: contextlib.ExitStack,
) -> str:
    """Put one file back through its checked folder handle; the line saying what was done."""
    if item.before is None:
        if target is not None:
            target.unlink()
        return f"deleted {item.path} (the turn created it)"
    data = store.vault.read_bytes(item.before)
    if target is None:  # its folder is gone too: made again, walked without following
        target = open_target(root, names, create_parents=True)
        handles.callback(target.close)
    # An existing file keeps its mode; one made again gets what the user's editor would give it.
    target.replace(data, new_file_mode=user_file_mode())
    return f"{'recreated' if item.current is None else 'restored'} {item.path}"


def conflict_message(plan: UndoPlan) -> str:
    names = ", ".join(f.path for f in plan.conflicts)
    return (
        f"changed since the turn wrote them: {names}. Undo would overwrite those edits; "
        "nothing was restored (force it to overwrite)."
    )


def blocked_message(plan: UndoPlan) -> str:
    shown = "; ".join(f"{s.path}: {s.reason}" for s in plan.blocked)
    return (
        f"a link is on the way to a file to restore ({shown}). Nothing was restored, forced or not: "
        "remove the link (or put the folder back) and undo again."
    )


def summary(plan: UndoPlan) -> str:
    """One line per file, for the preview's head; then one per recorded change that is blocked
    (a link on the way) or skipped (never restorable), with the reason."""
    lines = []
    for item in plan.files:
        mark = " (changed since: your edits would be lost)" if item.conflict else ""
        lines.append(f"{item.action} {item.path}{mark}")
    for skip in plan.skipped:
        lines.append(f"{'blocked' if skip.blocking else 'skip'} {skip.path}: {skip.reason}")
    return "\n".join(lines)


def with_undo_note(
    content: str | list[dict[str, Any]], store: Store, session_id: str, since: float
) -> str | list[dict[str, Any]]:
    """`content` of the next user message, with a note of the files undone after `since` (the
    last stored message's time) when there are any (context/undo_note.py: why)."""
    events = [e for e in store.events(session_id, event_kinds.UNDO) if e.created_at > since and e.data.get("paths")]
    if not events:
        return content
    paths = [str(p) for e in events for p in e.data["paths"]]
    turns = [int(t) for e in events for t in e.data.get("turns", ())]
    parts: list[dict[str, Any]] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return [*parts, {"type": "text", "text": undo_note(paths, turns)}]
