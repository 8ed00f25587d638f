"""What the model last saw of each file, so an edit over a change it never saw is refused.

A file the user (or a command, the model's own bash included) changed after the model read it
is edited from a stale picture: `old` may still match, but `new` was written for the file as it
was. The file tools record what the model saw (path -> sha256, mtime_ns, size) and refuse a
write when the file on disk no longer has it.

What counts as seen:
- a file_read of the path, whole or a line range: the model saw (part of) that content, and the
  guard's job is to notice changes made since, not to prove the model read every line (file_edit
  checks `old` against the file itself);
- the file tools' own successful writes: after writing, the model knows the content;
- the post-compaction reread (context/stages/post_compaction_reread.py), through the reader the
  agent hands the engine (`SeenRecordingReader`). The reader cannot tell whether the stage then
  drops a file's block for lack of room, so such a file counts as seen too: a missed refusal,
  never a wrong one;
- a file_read of the vault handle a refusal offered, while the file still has that content.

A path with no record is never refused: the model may know it from grep, bash or an attached
file, the exact `old` match of file_edit still protects the rest, and /undo keeps the pre-image.

Why store events (FILE_SEEN) and not memory: a resumed session keeps its records. A fork inherits
its ancestors' records made before its fork point, the history it shares. Only changes are
stored: a record equal to the path's last one adds nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.fenced_files import open_target
from myrm_tui.store.event_kinds import EventKind

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

# How a record came to be (the event's `how`); OFFERED is a refusal's handle, not a sighting.
READ, RANGE, WRITE, EDIT, REREAD, OFFERED = "read", "range", "write", "edit", "reread", "offered"


def _read_real(path: Path) -> bytes:
    """The bytes of the regular file at `path` (a real path: recorded resolved), walked from the
    root without following any link. A plain read followed links: a command that swaps a file the
    model read for a link (to `.myrm/sessions.db-shm`, say) would have had it opened and closed
    inside this process, which drops the store's SQLite locks (`fenced_files.HeldFiles`); a link
    found now is refused as an OSError, which every caller reads as "not what was seen"."""
    with open_target(Path(path.anchor), path.parts[1:]) as target:
        return target.read_bytes()


@dataclass(frozen=True)
class Seen:
    """One FILE_SEEN event's data, typed."""

    path: str  # workspace-relative ("/"-separated), or absolute outside the workspace
    sha256: str
    mtime_ns: int
    size: int
    how: str
    handle: str | None = None  # OFFERED only: the vault handle of the content offered

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "sha256": self.sha256,
            "mtime_ns": self.mtime_ns,
            "size": self.size,
            "how": self.how,
        }
        if self.handle is not None:
            out["handle"] = self.handle
        return out


def _seen_of(data: dict[str, Any]) -> Seen:
    return Seen(
        str(data["path"]),
        str(data["sha256"]),
        int(data.get("mtime_ns", 0)),
        int(data.get("size", 0)),
        str(data.get("how", READ)),
        data.get("handle"),
    )


def path_key(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


class ReadRegistry:
    """The session's records, read from the store on each use: cheap (one indexed query), and
    another process or a rebuilt agent writing to the same session is seen at once.
    No store (a bare tool test): nothing is recorded and nothing is refused."""

    def __init__(self, store: Store | None, session_id: str | None, workspace: Path) -> None:
        self.store = store
        self.session_id = session_id
        self.workspace = workspace.resolve()

    @property
    def enabled(self) -> bool:
        return self._log() is not None

    def _log(self) -> tuple[Store, str] | None:
        """Where the records live; None without a store or a session (a bare tool test)."""
        if self.store is None or self.session_id is None:
            return None
        return self.store, self.session_id

    def _records(self) -> list[Seen]:
        """Oldest first: the fork ancestors' (up to each fork point), then the session's own."""
        log = self._log()
        if log is None:
            return []
        store, session_id = log
        chain: list[tuple[str, float | None]] = [(session_id, None)]
        cutoff: float | None = None
        session = store.get_session(session_id)
        while session.parent_id is not None and session.fork_message_id is not None:
            at = float(store.get_message(session.fork_message_id).created_at)
            cutoff = at if cutoff is None else min(cutoff, at)
            chain.append((session.parent_id, cutoff))
            session = store.get_session(session.parent_id)
        out: list[Seen] = []
        for owner, limit in reversed(chain):
            for event in store.events(owner, EventKind.FILE_SEEN):
                if limit is None or event.created_at <= limit:
                    out.append(_seen_of(event.data))
        return out

    def last_seen(self, path: Path) -> Seen | None:
        """What the model last saw of `path`; None when it never saw it in this session."""
        key = path_key(path, self.workspace)
        return next((s for s in reversed(self._records()) if s.path == key and s.how != OFFERED), None)

    def record(self, path: Path, data: bytes, how: str, handle: str | None = None) -> None:
        log = self._log()
        if log is None:
            return
        try:
            mtime_ns = path.stat().st_mtime_ns
        except OSError:
            mtime_ns = 0
        key = path_key(path, self.workspace)
        seen = Seen(key, hashlib.sha256(data).hexdigest(), mtime_ns, len(data), how, handle)
        last = next((s for s in reversed(self._records()) if s.path == key), None)
        if last is not None and (last.sha256, last.how == OFFERED) == (seen.sha256, how == OFFERED):
            return  # the same content, seen (or offered) again: nothing new to remember
        store, session_id = log
        store.append_event(session_id, EventKind.FILE_SEEN, seen.data())

    def changed_since_seen(self, path: Path, data: bytes) -> bool:
        """True when the model saw `path` and `data` (its bytes now) is not what it saw."""
        seen = self.last_seen(path)
        return seen is not None and seen.sha256 != hashlib.sha256(data).hexdigest()

    def accept_offer(self, handle: str) -> None:
        """A file_read of a refusal's handle: the model now knows that content, so each path
        offered under it whose file still holds it counts as seen."""
        if not self.enabled:
            return
        records = self._records()
        for offer in [s for s in records if s.how == OFFERED and s.handle == handle]:
            path = Path(offer.path) if Path(offer.path).is_absolute() else self.workspace / offer.path
            try:
                data = _read_real(path.resolve())
            except (OSError, RuntimeError):  # RuntimeError: a link loop
                continue
            if hashlib.sha256(data).hexdigest() == offer.sha256:
                self.record(path, data, READ)


class SeenRecordingReader:
    """The post-compaction reread's file reader (the agent hands it to the engine): a file it
    returns whole is recorded as seen (a cut one is not: the model did not see the end).

    Held while the agent runs an owed compaction in the background (`Agent._loop`, the
    `compact_while_answering` setting): the request the model is answering went out without
    the reread, so the model has not seen those files yet, and an edit in that answer must still
    be checked against what it saw before. The records wait for `release`, which the agent calls
    as it builds the next request (the one that carries the reread), and each is kept only if the
    file still holds what was read: a file changed since (by the answer's own edit, a command,
    the user) is not what the prompt shows.
    """

    def __init__(self, reader: Callable[[str], str | None], store: Store, session_id: str, workspace: Path) -> None:
        self._reader = reader
        self._registry = ReadRegistry(store, session_id, workspace)
        self._held: list[tuple[Path, bytes]] | None = None

    def __call__(self, raw: str) -> str | None:
        text = self._reader(raw)
        if text is None:
            return None
        path = (self._registry.workspace / raw).resolve()
        try:
            data = _read_real(path)
        except OSError:
            return text
        if data.decode("utf-8", errors="replace") == text:
            held = self._held
            if held is not None:
                held.append((path, data))
            else:
                self._registry.record(path, data, REREAD)
        return text

    def hold(self) -> None:
        if self._held is None:
            self._held = []

    def release(self) -> None:
        held, self._held = self._held, None
        for path, data in held or ():
            try:
                now = _read_real(path)
            except OSError:
                continue
            if now == data:
                self._registry.record(path, data, REREAD)
