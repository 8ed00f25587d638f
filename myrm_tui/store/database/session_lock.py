"""One writer process per session: an exclusive `flock` on `.myrm/locks/<session id>.lock`.

Why flock on a per-session file: the kernel drops the lock the moment its holder dies (kill -9,
crash, power loss), so a lock can never go stale and nothing has to guess whether a pid is still
alive. The holder writes its pid into the file only so a refused process can say who holds it.

Locks are per process, not per `Store` object: every store of one process shares one file
descriptor per session (reference counted), because flock treats two descriptors of one process
as two owners and a process that opens its workspace twice must not lock itself out. The
descriptor is close-on-exec, so a tool's subprocess that outlives myrm never keeps the lock.

Lock files are never deleted: unlinking a lock file another process has just opened would let a
third process lock a fresh file while the second still holds the old one.

The same folder holds `store.lock`: every read-write store holds it shared, and
`myrm sessions recover` takes it exclusively before it replaces the database file.

`locks/` and every lock file are reached by a no-follow walk from the workspace (layout.py): a
lock file committed as a link to ~/.bashrc would otherwise be opened, locked and truncated to
hold a pid. The holder's pid is read from the descriptor that was opened, never by path.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.fenced_files import FenceError
from myrm_tui.store.constants import FILE_MODE, LOCKS_DIR
from myrm_tui.store.database.layout import open_in_store, store_refusal
from myrm_tui.store.errors import StoreError

STORE_LOCK_NAME = "store.lock"
# A pid is at most 7 digits on Linux; reading a little more tolerates a trailing newline.
_PID_READ_BYTES = 32
# The holder writes its pid just after it gets the lock, so a process refused in between finds
# the file empty: it looks again a few times (the wait only ever delays a refusal message).
_PID_RETRIES = 10
_PID_RETRY_S = 0.02


class SessionBusyError(StoreError):
    """Another process is writing this session."""

    def __init__(self, session_id: str, pid: int | None):
        self.session_id = session_id
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"session {session_id} is in use by {who} (another myrm); wait for it to finish, "
            "or continue in a fork of it (`myrm run --session ID --fork`, or /fork in the chat)."
        )


class StoreBusyError(StoreError):
    """The store is being recovered, or (for recovery) still in use by a writer."""


@dataclass
class _Held:
    fd: int
    refs: int


_registry: dict[str, _Held] = {}
_registry_lock = threading.Lock()


def locks_dir(myrm_dir: Path) -> Path:
    return myrm_dir / LOCKS_DIR


def _lock_path(myrm_dir: Path, session_id: str) -> Path:
    # Session ids are hex (secrets.token_hex); any other text is hashed so it can never name a
    # path outside the locks folder.
    name = (
        session_id
        if session_id.isascii() and session_id.isalnum()
        else hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
    )
    return locks_dir(myrm_dir) / f"{name}.lock"


def _open_lock_file(path: Path, *, create: bool = True) -> int:
    """The lock file's descriptor, walked without following from the workspace (`path` is
    `<workspace>/.myrm/locks/<name>`). StoreError for a link or special file on the way;
    FileNotFoundError when absent and not `create`."""
    try:
        with open_in_store(path.parent.parent, path.parent.name, create=create) as folder:
            flags = os.O_RDWR | (os.O_CREAT if create else 0)
            return folder.open_regular(path.name, flags, FILE_MODE)
    except FenceError as exc:
        raise store_refusal(exc) from None
    except FileNotFoundError:
        if not create:
            raise
        raise StoreError(f"cannot create the lock file {path}; check that {path.parent.parent} is writable.") from None
    except OSError as exc:
        raise StoreError(
            f"cannot create the lock file {path} ({exc.strerror or exc}); check that {path.parent.parent} is writable."
        ) from exc


def _try_flock(fd: int, path: Path, operation: int) -> bool:
    """True if locked; False if another owner holds a conflicting lock."""
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise StoreError(
            f"cannot lock {path} ({exc.strerror or exc}); keep the workspace on a local "
            "filesystem that supports file locks."
        ) from exc
    return True


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, _PID_READ_BYTES, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _holder_pid(fd: int) -> int | None:
    for _ in range(_PID_RETRIES):
        pid = _read_pid(fd)
        if pid is not None:
            return pid
        time.sleep(_PID_RETRY_S)
    return None


def _write_pid(fd: int) -> None:
    data = f"{os.getpid()}\n".encode("ascii")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def claim(myrm_dir: Path, session_id: str) -> None:
    """Become (or stay) this session's writer; SessionBusyError if another process is."""
    path = _lock_path(myrm_dir, session_id)
    key = str(path)
    with _registry_lock:
        held = _registry.get(key)
        if held is not None:
            held.refs += 1
            return
        fd = _open_lock_file(path)
        try:
            if not _try_flock(fd, path, fcntl.LOCK_EX):
                raise SessionBusyError(session_id, _holder_pid(fd))
            _write_pid(fd)
        except BaseException:
            os.close(fd)
            raise
        _registry[key] = _Held(fd, 1)


def release(myrm_dir: Path, session_id: str) -> None:
    """Drop one claim; the lock goes when the process's last claim on it does."""
    key = str(_lock_path(myrm_dir, session_id))
    with _registry_lock:
        held = _registry.get(key)
        if held is None:
            return
        held.refs -= 1
        if held.refs <= 0:
            del _registry[key]
            os.close(held.fd)  # closing the only descriptor releases the flock


def holder(myrm_dir: Path, session_id: str) -> int | None:
    """pid of another process writing the session (0 if it has not written its pid yet), or
    None when nobody else holds it. Creates nothing in a folder without locks."""
    path = _lock_path(myrm_dir, session_id)
    with _registry_lock:
        if str(path) in _registry:
            return None  # this process is the writer
        try:
            fd = _open_lock_file(path, create=False)
        except (OSError, StoreError):
            return None  # absent or unusable lock file: nobody can be holding it through us
        try:
            if _try_flock(fd, path, fcntl.LOCK_EX):
                return None
            return _holder_pid(fd) or 0
        finally:
            os.close(fd)  # also releases the probe's lock if it got one


class StoreLock:
    """`store.lock`: shared by every read-write store, exclusive for `sessions recover`."""

    _key: str | None  # the registry key while held; unset until the first acquire

    def __init__(self, myrm_dir: Path):
        self.path = locks_dir(myrm_dir) / STORE_LOCK_NAME

    def acquire_shared(self) -> None:
        self._acquire(
            fcntl.LOCK_SH,
            "the session store is being recovered by pid {pid}; wait for `myrm sessions recover` to finish.",
        )

    def acquire_exclusive(self) -> None:
        self._acquire(
            fcntl.LOCK_EX,
            "the session store is open in another myrm process; "
            "close every myrm of this workspace before recovering the store.",
        )

    def _acquire(self, operation: int, busy: str) -> None:
        key = f"{self.path}#{operation}"
        with _registry_lock:
            held = _registry.get(key)
            if held is not None:
                held.refs += 1
                self._key = key
                return
            other = f"{self.path}#{fcntl.LOCK_EX if operation == fcntl.LOCK_SH else fcntl.LOCK_SH}"
            if other in _registry:
                raise StoreBusyError(busy.format(pid=os.getpid()))
            fd = _open_lock_file(self.path)
            try:
                if not _try_flock(fd, self.path, operation):
                    raise StoreBusyError(busy.format(pid=_read_pid(fd) or "unknown"))
                if operation == fcntl.LOCK_EX:
                    _write_pid(fd)
            except BaseException:
                os.close(fd)
                raise
            _registry[key] = _Held(fd, 1)
            self._key = key

    def release(self) -> None:
        key = getattr(self, "_key", None)
        if key is None:
            return
        self._key = None
        with _registry_lock:
            held = _registry.get(key)
            if held is None:
                return
            held.refs -= 1
            if held.refs <= 0:
                del _registry[key]
                os.close(held.fd)
