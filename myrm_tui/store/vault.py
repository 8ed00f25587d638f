"""Content-addressed artifact vault: `.myrm/artifacts/<sha256 hex>[suffix]`.

Large tool outputs and anything the engine takes out of the prompt land here, and the prompt
keeps a handle `vault://<first 12 hex>` to get it back (invariant "lossless"). Files are named
by the hash of their bytes, so the same content is stored once and a handle can never come to
mean different bytes. Handles come from the model, so resolving one is defensive: only hex
digits are accepted and only regular files directly inside the vault are ever returned.

Reads check that promise: bytes whose sha256 differs from the file's name were changed after
they were stored (tampering or disk damage) and are refused with VaultTamperedError, never
served as the original. Storing the same content again repairs such a file.

The vault folder is reached by a no-follow walk from its anchor (the workspace, for a store's
vault: myrm_tui/fenced_files.py), and every artifact is read and written through that handle: an
`artifacts` folder or an artifact committed as a link is never followed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from myrm_tui.fenced_files import FenceError, Folder, open_root, walk
from myrm_tui.store.constants import DIR_MODE, FILE_MODE, HANDLE_HEX_CHARS
from myrm_tui.store.errors import UnknownArtifactError, VaultError, VaultTamperedError

__all__ = ["UnknownArtifactError", "Vault", "VaultError", "VaultTamperedError"]

_HEX = re.compile(r"[0-9a-f]{1,64}")
# A suffix is a short extension chain such as ".txt" or ".tar.gz": it can never add a path
# separator or "..".
_SUFFIX = re.compile(r"(\.[A-Za-z0-9_-]{1,16}){0,3}")
_ARTIFACT_NAME = re.compile(r"([0-9a-f]{64})((?:\.[A-Za-z0-9_-]{1,16}){0,3})")
# Hashing reads files in chunks of this size: large artifacts are verified without holding a
# second copy in memory.
_HASH_CHUNK_BYTES = 1 << 20


def _to_bytes(content: str | bytes) -> bytes:
    """UTF-8 bytes of `content`, keeping lone surrogates (e.g. undecodable subprocess output
    read with errors="surrogateescape") instead of failing or dropping them."""
    if isinstance(content, bytes):
        return content
    for errors in ("strict", "surrogateescape", "surrogatepass"):
        try:
            return content.encode("utf-8", errors)
        except UnicodeEncodeError:
            continue
    raise AssertionError("unreachable: surrogatepass encodes every str")


def _file_digest(folder: Folder, name: str) -> str:
    digest = hashlib.sha256()
    fd = folder.open_regular(name)
    try:
        while chunk := os.read(fd, _HASH_CHUNK_BYTES):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def _tampered(handle: str, path: Path) -> VaultTamperedError:
    return VaultTamperedError(
        f"{handle} was changed on disk after it was stored: its bytes no longer match their "
        f"sha256, so they are not served as the original. Restore {path} from a backup; storing "
        "the same content again (re-running what produced it) also repairs it."
    )


class Vault:
    HANDLE_PREFIX = "vault://"

    def __init__(self, directory: Path, *, anchor: Path | None = None):
        """`anchor`: the folder above `directory` that is the caller's own and may be followed
        (a store passes its workspace); everything below it is walked without following.
        Default: `directory`'s parent."""
        self.directory = directory
        self.anchor = anchor if anchor is not None else directory.parent
        self._names = directory.relative_to(self.anchor).parts

    def _folder(self, *, create: bool = False) -> Folder:
        """The vault folder's handle (the caller closes it). FileNotFoundError when it does not
        exist and not `create`; FenceError for a link on the way."""
        with open_root(self.anchor) as root:
            folder = walk(root, self._names[:-1], create=create, mode=DIR_MODE)
            with folder:
                return folder.child(self._names[-1], create=create, mode=DIR_MODE, chmod=create)

    # writing

    def put(self, content: str | bytes, *, suffix: str = "") -> str:
        """Store content (atomic temp+rename), return its handle `vault://<sha256 prefix>`.

        Idempotent: content already present (under any suffix) is not written again.
        """
        if not _SUFFIX.fullmatch(suffix):
            raise VaultError(f"artifact suffix {suffix!r} is not allowed; use a short extension like '.txt'.")
        data = _to_bytes(content)
        digest = hashlib.sha256(data).hexdigest()
        handle = self.HANDLE_PREFIX + digest[:HANDLE_HEX_CHARS]
        with self._folder(create=True) as folder:
            existing = [name for name in self._names_for_prefix(folder, digest) if name[:64] == digest]
            if any(_file_digest(folder, name) == digest for name in existing):
                return handle
            # Absent, or present only with changed bytes: (re)write it under its first name.
            # Always FILE_MODE, even over a changed file: the vault is owner-only whatever happened to it.
            folder.replace(existing[0] if existing else digest + suffix, data, mode=FILE_MODE)
        return handle

    # reading

    def read_bytes(self, handle: str) -> bytes:
        """The artifact's bytes, after checking them against the hash in its name."""
        prefix = self._parse(handle)
        with self._reading() as folder:
            name = self._one_name(folder, prefix)
            assert folder is not None, "a name was found, so the folder exists"
            data = folder.read_bytes(name)
        if hashlib.sha256(data).hexdigest() != name[:64]:
            raise _tampered(handle, self.directory / name)
        return data

    def read_head(self, path: Path, limit: int, *, verified: bool = False) -> tuple[bytes, int]:
        """(at most `limit` bytes of the artifact file at `path` (from `path_of`), its size), read
        through the vault folder's handle like every other vault read: never through a link, and
        never a file SQLite holds in this process (a hard link to the store's -shm under an
        artifact's name is refused, not opened: closing it would drop the store's locks).
        `verified`: the rest is read too and the whole hashed, through the same descriptor, so
        the head returned is of the bytes checked (VaultTamperedError otherwise)."""
        try:
            with self._reading() as folder:
                if folder is None:
                    raise FileNotFoundError(f"the vault folder {self.directory} does not exist")
                fd = folder.open_regular(path.name)
        except OSError as exc:  # FenceError, HeldFileError: the artifact cannot be read
            raise VaultError(f"{self.HANDLE_PREFIX}{path.name[:HANDLE_HEX_CHARS]} cannot be read: {exc}") from None
        digest = hashlib.sha256()
        try:
            size = os.fstat(fd).st_size
            chunks: list[bytes] = []
            got = 0
            while (got < limit or verified) and (chunk := os.read(fd, _HASH_CHUNK_BYTES)):
                digest.update(chunk)
                if got < limit:
                    chunks.append(chunk[: limit - got])
                    got += len(chunks[-1])
        finally:
            os.close(fd)
        if verified and digest.hexdigest() != path.name[:64]:
            raise _tampered(self.HANDLE_PREFIX + path.name[:HANDLE_HEX_CHARS], path)
        return b"".join(chunks), size

    def tampered(self) -> tuple[int, list[str]]:
        """(artifacts checked, handles whose bytes no longer match their hash): every file."""
        checked = 0
        bad: list[str] = []
        with self._reading() as folder:
            for name in sorted(self._names_for_prefix(folder, "")):
                assert folder is not None, "names come from the folder"
                checked += 1
                if _file_digest(folder, name) != name[:64]:
                    bad.append(self.HANDLE_PREFIX + name[:HANDLE_HEX_CHARS])
        return checked, bad

    def read_text(self, handle: str, lines: tuple[int, int] | None = None) -> str:
        """Whole text, or 1-based inclusive line range (start, end).

        Lines end at "\\n" (as `sed -n 'a,bp'` counts them) and keep their newline, so the
        result is an exact slice of the text. A range past the end returns what exists.
        """
        text = self.read_bytes(handle).decode("utf-8", errors="replace")
        if lines is None:
            return text
        start, end = lines
        if start < 1 or end < start:
            raise VaultError(f"line range {start}-{end} is invalid; use 1-based (start, end) with start <= end.")
        pieces = text.split("\n")
        chunks = [piece + "\n" for piece in pieces[:-1]]
        if pieces[-1]:
            chunks.append(pieces[-1])
        return "".join(chunks[start - 1 : end])

    def exists(self, handle: str) -> bool:
        """True if the handle names exactly one artifact, False if it names none.

        Malformed or ambiguous handles still raise VaultError: they are caller bugs or need a
        longer prefix, not absent artifacts.
        """
        try:
            self.path_of(handle)
        except UnknownArtifactError:
            return False
        return True

    def path_of(self, handle: str) -> Path:
        """Where the artifact is (for messages and its suffix); read it with `read_bytes`."""
        prefix = self._parse(handle)
        with self._reading() as folder:
            return self.directory / self._one_name(folder, prefix)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Folder | None]:
        """The vault folder's handle for a read, None when there is no vault folder yet."""
        try:
            folder = self._folder()
        except FileNotFoundError:
            yield None
            return
        except FenceError as exc:
            raise VaultError(str(exc)) from None
        with folder:
            yield folder

    def _one_name(self, folder: Folder | None, prefix: str) -> str:
        matches = self._names_for_prefix(folder, prefix)
        digests = sorted({m.group(1) for name in matches if (m := _ARTIFACT_NAME.fullmatch(name))})
        if not digests:
            raise UnknownArtifactError(
                f"no artifact {self.HANDLE_PREFIX}{prefix} in this workspace; "
                "check the handle (it is shown where the content was offloaded)."
            )
        if len(digests) > 1:
            shown = ", ".join(self.HANDLE_PREFIX + d[: len(prefix) + 4] for d in digests[:5])
            raise VaultError(
                f"{self.HANDLE_PREFIX}{prefix} matches {len(digests)} artifacts ({shown}); use a longer handle."
            )
        # Several files can only share a digest when the same bytes were stored under two
        # suffixes by concurrent writers; they are identical, so any one will do.
        return min(matches)

    # internals

    def _parse(self, handle: str) -> str:
        if not isinstance(handle, str):
            raise VaultError(f"a vault handle must be a string like vault://3f2a9c01b4de, not {handle!r}.")
        text = handle.strip()
        if text[: len(self.HANDLE_PREFIX)].lower() != self.HANDLE_PREFIX:
            raise VaultError(f"{handle!r} is not a vault handle; handles look like vault://3f2a9c01b4de.")
        body = text[len(self.HANDLE_PREFIX) :].lower()
        if not _HEX.fullmatch(body):
            raise VaultError(
                f"{handle!r} is not a valid vault handle: after vault:// only hex digits (up to "
                "64) are allowed, so it cannot point outside the vault."
            )
        return body

    def _names_for_prefix(self, folder: Folder | None, prefix: str) -> list[str]:
        """Regular files directly in the vault whose name is `<digest>[suffix]` and whose
        digest starts with `prefix`. Symlinks and anything else are ignored."""
        if folder is None:  # no vault folder yet
            return []
        found: list[str] = []
        for name in folder.names():
            if not name.startswith(prefix) or not _ARTIFACT_NAME.fullmatch(name):
                continue
            entry = folder.lstat(name)
            if entry is not None and stat.S_ISREG(entry.st_mode):
                found.append(name)
        return found
