"""Vault artifacts as the store sees them: what indexing one records, and what a session may
read of one. Functions on an open connection; the Store holds the lock around them and keeps
the slow part (reading and hashing a vault file) outside its write transaction.

Who may read an artifact: a session reads what is linked to (or named by) its own history, fork
ancestry included; a workspace-scoped recall (`search.WHOLE_STORE`) widens that to every
session of this store. The store and its vault are one workspace's `.myrm/`, so no widening
ever reaches another workspace's artifacts."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.store.constants import ARTIFACT_INDEX_MAX_CHARS, BINARY_SNIFF_BYTES, HANDLE_HEX_CHARS
from myrm_tui.store.database import search_index
from myrm_tui.store.records import ArtifactRecord
from myrm_tui.store.search import Visible, visible_artifact_ids_sql
from myrm_tui.store.vault import Vault


@dataclass(frozen=True)
class Located:
    """A handle resolved in the vault: its file, full digest and canonical handle."""

    path: Path
    digest: str
    canonical: str


def locate(vault: Vault, handle: str) -> Located:
    """VaultError for a bad or unknown handle."""
    path = vault.path_of(handle)
    digest = path.name[:64]
    return Located(path, digest, Vault.HANDLE_PREFIX + digest[:HANDLE_HEX_CHARS])


def catalogued(conn: sqlite3.Connection, digest: str) -> bool:
    return conn.execute("SELECT 1 FROM artifacts WHERE digest = ?", (digest,)).fetchone() is not None


def text_to_index(vault: Vault, found: Located, text: str | None, known: bool) -> search_index.ArtifactText:
    """What indexing the artifact records: its text (given, or read from the vault and checked
    against its hash) unless the catalogue already has this content (`known`)."""
    size = found.path.stat().st_size
    body: str | None = None
    truncated = False
    if not known:
        if text is not None:
            body, truncated = text[:ARTIFACT_INDEX_MAX_CHARS], len(text) > ARTIFACT_INDEX_MAX_CHARS
        else:
            body, truncated = _read_artifact_text(vault, found.path, size)
    return search_index.ArtifactText(found.digest, found.canonical, size, body, truncated)


def indexed_record(conn: sqlite3.Connection, segments: Visible, found: Located) -> ArtifactRecord | None:
    """The artifact as indexed for the history `segments` describe (or the whole store), None if it is not."""
    ids_sql, params = visible_artifact_ids_sql(segments)
    row = conn.execute(
        "SELECT a.size_bytes, a.binary, a.indexed_chars, a.truncated, "
        "(SELECT MIN(l.created_at) FROM artifact_links l WHERE l.artifact_id = a.id) "
        f"FROM artifacts a WHERE a.digest = ? AND a.id IN ({ids_sql})",
        (found.digest, *params),
    ).fetchone()
    if row is None:
        return None
    return ArtifactRecord(
        handle=found.canonical,
        digest=found.digest,
        size_bytes=row[0],
        binary=bool(row[1]),
        indexed=True,
        indexed_chars=row[2],
        truncated=bool(row[3]),
        linked_at=row[4],
    )


def unindexed_record(vault: Vault, found: Located) -> ArtifactRecord:
    """An artifact a message names but nothing indexed: described from its file, read through
    the vault's folder handle (`Vault.read_head`: no link, no file the store holds)."""
    head, size = vault.read_head(found.path, BINARY_SNIFF_BYTES)
    return ArtifactRecord(
        handle=found.canonical,
        digest=found.digest,
        size_bytes=size,
        binary=b"\0" in head,
        indexed=False,
        indexed_chars=0,
        truncated=False,
        linked_at=None,
    )


def _read_artifact_text(vault: Vault, path: Path, size: int) -> tuple[str | None, bool]:
    """(text to index or None if binary, truncated?) of a vault file, keeping at most what the
    cap can use (a UTF-8 character is at most 4 bytes), checked against its hash through the
    same descriptor (never index changed bytes as the artifact's text, nor bytes swapped in
    between a check and the read)."""
    limit = ARTIFACT_INDEX_MAX_CHARS * 4
    data, _ = vault.read_head(path, limit, verified=True)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None, False
    text = data.decode("utf-8", errors="replace")
    truncated = len(text) > ARTIFACT_INDEX_MAX_CHARS or size > len(data)
    return text[:ARTIFACT_INDEX_MAX_CHARS], truncated
