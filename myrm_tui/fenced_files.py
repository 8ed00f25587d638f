"""File operations fenced under one folder handle: the one way myrm reads, writes, replaces and
deletes a file, for the model (file tools, undo) and for itself (store, locks, vault, config).

Why handles and not paths: anything the model starts runs while myrm works (a background bash
job, a process a command left behind), and a path checked and then opened again is walked twice.
Between the two walks a folder can become a symlink to the user's config or ~/.ssh, and the
second walk writes there. So a root folder is opened once, following its path because the user
chose it (the workspace they started myrm in, reached through a symlink or not; their config
folder), and every name below it is reached one at a time with `openat(O_NOFOLLOW)` relative to
the handle above it. A symlink anywhere below the root, a folder or the file itself, is refused
with FenceError, never followed; a FIFO, a device or a socket where a regular file is expected is
refused too (opened with O_NONBLOCK and checked on the handle, so looking at one never blocks).
Everything that follows (the read, the temp file, the rename, the fsync, the chmod) happens on
the handles of that one walk, so the file written is the file checked whatever runs meanwhile.

Why temp file + fsync + rename in the same folder + fsync of the folder: a crash, a kill or a
full disk leaves either the old file or the new one, whole, and once `replace` returns the new
one survives a power loss. A half-written config reads as broken, a half-written trust store as
"nothing trusted", a half-restored user file as silent damage.

The lowest layer (stdlib only), so settings, the store and the agent's tools share it; Linux
semantics (O_NOFOLLOW, O_DIRECTORY, `dir_fd`, /proc/self/fd), which is where myrm runs. A caller
that holds a path rather than a handle goes through fenced_paths.py (which links it follows).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import secrets
import stat
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from types import TracebackType

# A file myrm creates holds the user's settings, trust decisions, session data or (tools) work
# in their workspace: readable by the user only, unless the caller says it is the user's work.
NEW_FILE_MODE = 0o600
# The permission bits kept from a file being replaced: read/write/execute for user, group and
# others. Not setuid/setgid/sticky: the replacement is a new file owned by this process, and
# copying a stray setuid bit onto it would grant what the user never gave (editors drop them too).
_MODE_BITS = 0o777
# A folder created for the user's work (file_write's missing parents): what `mkdir` gives, so
# the umask decides, as it does for the user's own `mkdir -p`.
USER_DIR_MODE = 0o777
# Temporary files are named after their target and end with this, so a leftover one (the process
# was killed between create and rename) says whose it was and that it may be deleted.
TEMP_SUFFIX = ".myrm-tmp"
# Characters of the target's name kept in a temporary name: with the dot, the random part and the
# suffix it stays under the 255-byte name limit of every Linux filesystem.
_TEMP_NAME_KEEP = 200
# Random bytes in a temporary name: two writers of the same file never pick the same one.
_TEMP_TOKEN_BYTES = 4
# Bytes read per call: large files are read without one huge allocation per attempt.
_READ_CHUNK = 1 << 20

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading would wait for a writer forever; with it the open
# returns at once and the fstat that follows refuses the FIFO. It changes nothing for a regular file.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class FenceError(OSError):
    """A path myrm will not walk: a symlink where it must go through or open, something that is
    not a folder where one is needed, a FIFO/device/socket where a regular file is needed, or a
    path that leaves its root. The message names the place and says what to do."""

    def __init__(self, fact: str, path: Path | str | None = None, hint: str = "") -> None:
        super().__init__(errno.ELOOP, fact)
        self.fact = fact  # what is there ("/ws/conf is a symbolic link (to ~/.config), not a folder")
        self.hint = hint  # what to do, for callers that have nothing better to say
        self.path = Path(path) if path is not None else None

    def __str__(self) -> str:
        return f"{self.fact}; {self.hint}." if self.hint else f"{self.fact}."


class HeldFileError(OSError):
    """A file SQLite has open and locked in this process (the session store and its sidecars):
    opening it here would drop those locks (`HeldFiles`)."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(
            errno.EBUSY,
            f"{path} is part of the session store this myrm process has open; myrm does not open it "
            "a second time (closing that descriptor would drop the database's locks and can crash "
            "the session or lose its last rows). Ask about the session's history instead, or read a "
            "copy (`myrm sessions export`)",
        )
        self.path = Path(path)

    def __str__(self) -> str:
        return f"{self.strerror}."


class HeldFiles:
    """The files (device, inode) that SQLite holds POSIX record locks on in this process.

    Why it exists and why it is process-wide: closing *any* ordinary descriptor of a file drops
    every POSIX lock the process holds on it. For the store that means the database's shared lock
    (which keeps another process from deleting the write-ahead log) and the -shm's "dead man
    switch" (which keeps it from resetting the shared index under us: the session then dies of
    SIGBUS on its next write). The locks belong to the process, not to a session or a store object,
    so the record of them does too: every store connection registers its files here while open
    (`store/database/db.py`), and `Folder` refuses to open them (a file tool asked to read
    `.myrm/sessions.db-shm`, a link to it that came with a repository, a second store's header
    check). Counted: two stores of one workspace hold the same files."""

    def __init__(self) -> None:
        self._count: Counter[tuple[int, int]] = Counter()
        self._lock = threading.Lock()

    def hold(self, files: Iterable[tuple[int, int]]) -> None:
        with self._lock:
            self._count.update(files)

    def release(self, files: Iterable[tuple[int, int]]) -> None:
        with self._lock:
            self._count.subtract(files)
            self._count = +self._count  # drop the ones at zero

    def __contains__(self, file: object) -> bool:
        with self._lock:
            return file in self._count


HELD_BY_DATABASES = HeldFiles()


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def check_name(name: str) -> str:
    """`name` when it is one path component; ValueError otherwise (a bug in the caller: names
    come from a walk that already split the path)."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"{name!r} is not a single file name")
    return name


def user_file_mode() -> int:
    """The mode the user's own editor would give a new file: 0o666 less their umask.

    Why: a file the agent creates in the workspace (a script, a source file) is the user's work,
    not myrm's private data; 0o600 there surprises anyone sharing the tree or serving it. The
    umask is read from /proc (no process-wide change); elsewhere it is read once, the only way
    there is (set and put back), so a thread creating a file meanwhile cannot be hit twice."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o666 & ~_umask_once()


@functools.cache
def _umask_once() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class Folder:
    """An open folder handle. `path` is what it was reached as, for messages and for callers that
    must hand a path to another program; it is never opened again by this class."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    # lifetime

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def __del__(self) -> None:  # a handle dropped on an error path must not leak
        with contextlib.suppress(OSError, AttributeError):
            self.close()

    def fileno(self) -> int:
        return self.fd

    # looking

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry itself (a symlink is reported as one), None when there is none."""
        try:
            return os.stat(check_name(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def link_target(self, name: str) -> str:
        """Where the symlink `name` points, for messages ("?" when it cannot be read)."""
        try:
            return os.readlink(check_name(name), dir_fd=self.fd)
        except OSError:
            return "?"

    def names(self) -> list[str]:
        """The entries of this folder (the handle's own listing, not the path's)."""
        with os.scandir(self.fd) as entries:
            return [entry.name for entry in entries]

    def real_path(self) -> Path:
        """Where the kernel says this handle is now: the path another program (SQLite, git)
        would have to be given. Checked by callers that hand a path on, see `proc_path`."""
        try:
            return Path(os.readlink(f"/proc/self/fd/{self.fd}"))
        except OSError:
            return self.path.resolve()

    def proc_path(self, name: str = "") -> str:
        """A path that reaches this very folder through the handle (`/proc/self/fd/N`), for a
        library that only takes paths: no name above this folder is looked up again."""
        base = f"/proc/self/fd/{self.fd}"
        return f"{base}/{check_name(name)}" if name else base

    def _refusal(self, name: str, mode: int, wanted: str) -> FenceError:
        shown = self.path / name
        what = _kind(mode)
        hint = ""
        if stat.S_ISLNK(mode):
            what += f" (to {self.link_target(name)})"
            hint = "myrm never reads or writes through a link; use the path it points to, if that is allowed"
        return FenceError(f"{shown} is {what}, not {wanted}", shown, hint)

    # folders

    def child(self, name: str, *, create: bool = False, mode: int = USER_DIR_MODE, chmod: bool = False) -> Folder:
        """The sub-folder `name`, opened without following a link. `create`: made when missing
        (with `mode`, less the umask unless `chmod`, which sets `mode` exactly on the handle)."""
        check_name(name)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: open checks what it is
                os.mkdir(name, mode, dir_fd=self.fd)
            fd = self._open_dir(name)
        except OSError as exc:
            raise self._dir_refusal(name, exc) from None
        folder = Folder(fd, self.path / name)
        if chmod:
            os.fchmod(fd, mode)
        return folder

    def _open_dir(self, name: str) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise self._dir_refusal(name, exc) from None

    def _dir_refusal(self, name: str, exc: OSError) -> OSError:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            return exc
        found = self.lstat(name)
        if found is None:
            return exc
        return self._refusal(name, found.st_mode, "a folder")

    # reading

    def open_regular(self, name: str, flags: int = os.O_RDONLY, mode: int = NEW_FILE_MODE) -> int:
        """A descriptor of the regular file `name`, never through a link, never a FIFO, device or
        socket (checked on the descriptor itself). `flags` may add O_RDWR/O_WRONLY, O_CREAT,
        O_EXCL, O_APPEND; never O_TRUNC: a file is only ever replaced whole (`replace`)."""
        check_name(name)
        if flags & os.O_TRUNC:
            raise ValueError("open_regular never truncates; use replace")
        fd = self._open_file(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
        try:
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_file(self, name: str, flags: int, mode: int = NEW_FILE_MODE) -> int:
        """`os.open` below this folder, refused unless a regular file is what it opens, and never
        a file a database of this process holds locks on (`HeldFiles`). An existing file is first
        pinned with O_PATH (opens nothing, so a device never acts on it, and drops no lock) and
        checked, then opened through the pin's /proc/self/fd link, which reaches that very inode:
        no name is looked up twice."""
        pin_flags = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            pin = self._guarded_open(name, pin_flags)
        except FileNotFoundError:
            if not flags & os.O_CREAT:
                raise
            try:  # a file this open creates is a new regular file: no database holds it
                return self._guarded_open(name, flags | os.O_EXCL, mode)
            except FileExistsError:
                if flags & os.O_EXCL:
                    raise
                pin = self._guarded_open(name, pin_flags)  # made meanwhile: pinned and checked
        try:
            found = os.fstat(pin)
            if not stat.S_ISREG(found.st_mode):  # O_PATH|O_NOFOLLOW opens a link itself: refused here
                raise self._refusal(name, found.st_mode, "a regular file")
            if flags & os.O_PATH:
                kept, pin = pin, -1
                return kept
            if flags & os.O_CREAT and flags & os.O_EXCL:
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(self.path / name))
            if (found.st_dev, found.st_ino) in HELD_BY_DATABASES:
                raise HeldFileError(self.path / name)
            if flags & os.O_CREAT:
                self._refuse_foreign_in_sticky(name, found)
            return self._reopen(name, pin, found, flags & ~(os.O_CREAT | os.O_EXCL))
        finally:
            if pin >= 0:
                os.close(pin)

    def _reopen(self, name: str, pin: int, pinned: os.stat_result, flags: int) -> int:
        """Open the file `pin` holds, with `flags`, through its /proc/self/fd link (the pinned
        inode itself, whatever the name holds now). Without /proc (a container that does not mount
        it), by name without following, kept only if it is still the pinned inode; no store can be
        open then (`store/database/db.py` reaches SQLite through /proc too), so closing a file
        swapped in meanwhile drops no database's locks."""
        try:
            return os.open(f"/proc/self/fd/{pin}", flags & ~os.O_NOFOLLOW)
        except FileNotFoundError:
            if os.path.isdir("/proc/self/fd"):
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(self.path / name)) from None
        except OSError as exc:  # name the file, not the /proc link
            raise type(exc)(exc.errno, exc.strerror, str(self.path / name)) from None
        fd = os.open(name, flags | os.O_NOFOLLOW, dir_fd=self.fd)
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (pinned.st_dev, pinned.st_ino):
            os.close(fd)
            raise FenceError(f"{self.path / name} was replaced while myrm opened it", self.path / name, "try again")
        return fd

    def _refuse_foreign_in_sticky(self, name: str, found: os.stat_result) -> None:
        """What the kernel's `fs.protected_regular` does for an O_CREAT open of a file that
        exists, done here because the reopen no longer carries O_CREAT: in a sticky folder others
        may write (/tmp), a file owned by neither us nor the folder's owner is not ours to open
        for writing (another user planted it where we meant to create ours). Stricter than the
        sysctl's default, never looser."""
        folder = os.fstat(self.fd)
        shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & (stat.S_IWOTH | stat.S_IWGRP)
        if shared and found.st_uid not in (os.geteuid(), folder.st_uid):
            raise PermissionError(
                errno.EACCES,
                "owned by another user in a shared sticky folder; not opened to create or write",
                str(self.path / name),
            )

    def _guarded_open(self, name: str, flags: int, mode: int = NEW_FILE_MODE) -> int:
        try:
            return os.open(name, flags, mode, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENOTDIR, errno.EOPNOTSUPP):
                found = self.lstat(name)
                if found is not None:
                    raise self._refusal(name, found.st_mode, "a regular file") from None
            raise

    def pin_regular(self, name: str) -> int:
        """An O_PATH descriptor of the regular file `name` (never a link's target): it holds the
        inode and answers fstat, and reads and writes nothing.

        Why not `open_regular` for a file SQLite has open (the database and its -wal/-shm): the
        close of any ordinary descriptor of a file drops every POSIX record lock this process holds
        on it, SQLite's included (the shared lock that keeps another process from deleting the
        log, the -shm's "dead man switch" that keeps it from resetting the index under us: the
        next read of the mapped index then dies of SIGBUS). Closing an O_PATH descriptor drops
        no lock."""
        return self._open_file(check_name(name), os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)

    def _replaceable(self, name: str) -> os.stat_result | None:
        """The entry `name` (None: absent) if it is a regular file no database of this process
        holds: a store file replaced or removed under a live connection detaches it from every
        other process, which then starts a new log or index beside the one in use."""
        found = self.lstat(name)
        if found is None:
            return None
        if not stat.S_ISREG(found.st_mode):
            raise self._refusal(name, found.st_mode, "a regular file")
        if (found.st_dev, found.st_ino) in HELD_BY_DATABASES:
            raise HeldFileError(self.path / name)
        return found

    def read_bytes(self, name: str, *, limit: int | None = None) -> bytes:
        """The regular file's bytes; with `limit`, at most `limit + 1` (a caller checks the size
        on what it got, not on a stat that a writer can change). FileNotFoundError when absent."""
        fd = self.open_regular(name)
        try:
            return _read_all(fd, limit)
        finally:
            os.close(fd)

    def read_if_file(self, name: str, *, limit: int | None = None) -> bytes | None:
        """The bytes of a regular file `name`; None when there is none (missing, or anything
        that is not a regular file: a link, a folder, a FIFO)."""
        found = self.lstat(name)
        if found is None or not stat.S_ISREG(found.st_mode):
            return None
        try:
            return self.read_bytes(name, limit=limit)
        except (FileNotFoundError, FenceError):
            return None

    # writing

    def replace(
        self, name: str, data: str | bytes, *, mode: int | None = None, new_file_mode: int = NEW_FILE_MODE
    ) -> None:
        """Replace `name` with `data` (text is written as UTF-8, newlines untranslated). `mode`
        None: an existing file keeps its mode, a new one gets `new_file_mode` (myrm's private
        files: NEW_FILE_MODE; the user's work: `user_file_mode()`); otherwise the file gets `mode`.
        FenceError when `name` is a link, a folder or a special file: that is never replaced.

        If anything fails, `name` is left as it was and the temporary file is removed."""
        payload = data.encode("utf-8") if isinstance(data, str) else data
        found = self._replaceable(name)
        if mode is None:
            mode = found.st_mode & _MODE_BITS if found is not None else new_file_mode
        temp = f".{name[:_TEMP_NAME_KEEP]}.{secrets.token_hex(_TEMP_TOKEN_BYTES)}{TEMP_SUFFIX}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self.fd)
        try:
            try:
                os.fchmod(fd, mode)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=self.fd)
            raise
        self.fsync()

    def restrict(self, name: str, mode: int) -> bool:
        """chmod the regular file `name` through its own descriptor (never a link's target);
        False when there is no such file. The descriptor is an O_PATH one (`pin_regular` says
        why: the file may be a database SQLite has open), reached for the chmod through its
        /proc/self/fd link, which names that very inode."""
        try:
            fd = self.pin_regular(name)
        except FileNotFoundError:
            return False
        try:
            os.chmod(f"/proc/self/fd/{fd}", mode)
        finally:
            os.close(fd)
        return True

    def unlink(self, name: str) -> bool:
        """Remove the entry `name` (a regular file; a link is refused, a folder too). False when
        there was nothing."""
        if self._replaceable(name) is None:
            return False
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        return True

    def remove_quietly(self, name: str) -> None:
        """Unlink `name` whatever it is (never a folder), ignoring its absence: for myrm's own
        scratch files, whose names nobody else can guess."""
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            os.unlink(check_name(name), dir_fd=self.fd)

    def link(self, source: str, name: str) -> None:
        """Hard-link `source` as `name` in this folder; FileExistsError when `name` exists (a
        link never replaces anything, which is what makes it a safe publish)."""
        os.link(check_name(source), check_name(name), src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)

    def rename(self, source: str, name: str) -> None:
        """Rename within this folder (replacing `name` if it is a file)."""
        os.rename(check_name(source), check_name(name), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def fsync(self) -> None:
        """Make renames and links in this folder durable. Some filesystems refuse fsync on a
        folder; then nothing more can be done."""
        with contextlib.suppress(OSError):
            os.fsync(self.fd)


def _read_all(fd: int, limit: int | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    cap = None if limit is None else limit + 1
    while cap is None or size < cap:
        want = _READ_CHUNK if cap is None else min(_READ_CHUNK, cap - size)
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def open_root(path: Path, *, create: bool = False, mode: int | None = None) -> Folder:
    """The caller's own folder, opened once by following its path: the user chose it (the
    workspace they started in, through a symlink or not; their config folder). Nothing below it
    is followed. `create`: made with its parents when missing (also the caller's own path)."""
    path = Path(path)
    if create:
        if mode is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.mkdir(mode=mode, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return Folder(fd, path)


def split_relative(text: str | PurePosixPath) -> tuple[str, ...]:
    """The names of a relative path, `.` and empty parts dropped; ValueError for an absolute path
    or one with `..` (it would leave the folder it is relative to, however it is spelled)."""
    pure = PurePosixPath(text)
    if pure.is_absolute():
        raise ValueError(f"{text} is an absolute path")
    parts = tuple(part for part in pure.parts if part not in ("", "."))
    if ".." in parts:
        raise ValueError(f"{text} goes up with ..")
    return parts


def walk(root: Folder, names: Sequence[str], *, create: bool = False, mode: int = USER_DIR_MODE) -> Folder:
    """The folder `root/names...`, each name opened without following a link; a new handle
    (the caller closes it; `root` stays open). `create`: missing folders are made with `mode`."""
    current = Folder(os.dup(root.fd), root.path)
    try:
        for name in names:
            nxt = current.child(name, create=create, mode=mode)
            current.close()
            current = nxt
    except BaseException:
        current.close()
        raise
    return current


class Target:
    """A file named in the folder that holds it: the parent's handle (walked without following)
    and the name. What every operation on one file goes through, so a check and the action that
    follows it see the same folder."""

    def __init__(self, folder: Folder, name: str) -> None:
        self.folder = folder
        self.name = check_name(name)

    @property
    def path(self) -> Path:
        return self.folder.path / self.name

    def close(self) -> None:
        self.folder.close()

    def __enter__(self) -> Target:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def lstat(self) -> os.stat_result | None:
        return self.folder.lstat(self.name)

    def read_bytes(self, *, limit: int | None = None) -> bytes:
        return self.folder.read_bytes(self.name, limit=limit)

    def read_if_file(self, *, limit: int | None = None) -> bytes | None:
        return self.folder.read_if_file(self.name, limit=limit)

    def replace(self, data: str | bytes, *, mode: int | None = None, new_file_mode: int = NEW_FILE_MODE) -> None:
        self.folder.replace(self.name, data, mode=mode, new_file_mode=new_file_mode)

    def unlink(self) -> bool:
        return self.folder.unlink(self.name)


def open_target(
    root: Path | Folder, names: Sequence[str], *, create_parents: bool = False, mode: int = USER_DIR_MODE
) -> Target:
    """The file `root/names...` as a Target: `root` opened following its path (or a handle the
    caller holds), every folder below it walked without following. FileNotFoundError when a
    folder on the way is missing (unless `create_parents`), FenceError when one is not a folder."""
    if not names:
        raise IsADirectoryError(errno.EISDIR, "the path names a folder, not a file", str(root))
    if isinstance(root, Folder):
        return Target(walk(root, names[:-1], create=create_parents, mode=mode), names[-1])
    with open_root(root) as base:
        return Target(walk(base, names[:-1], create=create_parents, mode=mode), names[-1])
