"""Content-addressed artifact vault: `.myrm/artifacts/<sha256 hex>[suffix]`.

Large tool outputs and anything the engine takes out of the prompt land here, and the prompt
keeps a handle `vault://<first 12 hex>` to get it back (invariant "lossless"). Files are named
by the hash of their bytes, so the same content is stored once and a handle can never come to
mean different bytes. Handles come from the model, so resolving one is defensive: only hex
digits are accepted and only regular files directly inside the vault are ever returned.

Reads check that promise: bytes whose sha256 differs from the file's name were changed after
they were stored (tampering or disk damage) and are refused with VaultTamperedError, never
served as the original. Storing the same content again repairs such a file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from myrm_tui.atomic_write import atomic_write
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


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _tampered(handle: str, path: Path) -> VaultTamperedError:
    return VaultTamperedError(
        f"{handle} was changed on disk after it was stored: its bytes no longer match their "
        f"sha256, so they are not served as the original. Restore {path} from a backup; storing "
        "the same content again (re-running what produced it) also repairs it."
    )


class Vault:
    HANDLE_PREFIX = "vault://"

    def __init__(self, directory: Path):
        self.directory = directory

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
        self._ensure_directory()
        existing = self._files_for_digest(digest)
        intact = [path for path in existing if _file_digest(path) == digest]
        if intact:
            return handle
        # Absent, or present only with changed bytes: (re)write it under its first name.
        # Always FILE_MODE, even over a changed file: the vault is owner-only whatever happened to it.
        atomic_write(self.directory / (existing[0].name if existing else digest + suffix), data, mode=FILE_MODE)
        return handle

    # reading

    def read_bytes(self, handle: str) -> bytes:
        """The artifact's bytes, after checking them against the hash in its name."""
        path = self.path_of(handle)
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != path.name[:64]:
            raise _tampered(handle, path)
        return data

    def verify(self, path: Path) -> None:
        """VaultTamperedError unless the file at `path` (from `path_of`) hashes to its name."""
        if _file_digest(path) != path.name[:64]:
            raise _tampered(self.HANDLE_PREFIX + path.name[:HANDLE_HEX_CHARS], path)

    def tampered(self) -> tuple[int, list[str]]:
        """(artifacts checked, handles whose bytes no longer match their hash): every file."""
        checked = 0
        bad: list[str] = []
        for path in sorted(self._files_for_prefix("")):
            checked += 1
            if _file_digest(path) != path.name[:64]:
                bad.append(self.HANDLE_PREFIX + path.name[:HANDLE_HEX_CHARS])
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
        prefix = self._parse(handle)
        matches = self._files_for_prefix(prefix)
        digests = sorted({m.group(1) for path in matches if (m := _ARTIFACT_NAME.fullmatch(path.name))})
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

    def _files_for_prefix(self, prefix: str) -> list[Path]:
        """Regular files directly in the vault whose name is `<digest>[suffix]` and whose
        digest starts with `prefix`. Symlinks and anything else are ignored."""
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return []
        found: list[Path] = []
        for entry in entries:
            if not entry.name.startswith(prefix):
                continue
            if not _ARTIFACT_NAME.fullmatch(entry.name):
                continue
            if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                continue
            found.append(self.directory / entry.name)
        return found

    def _files_for_digest(self, digest: str) -> list[Path]:
        return [p for p in self._files_for_prefix(digest) if p.name[:64] == digest]

    def _ensure_directory(self) -> None:
        self.directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        os.chmod(self.directory, DIR_MODE)
