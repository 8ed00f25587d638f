"""The canonical, lossless session log: SQLite (WAL) + a content-addressed artifact vault."""

from myrm_tui.store.records import ArtifactRecord, EventRecord, MessageRecord, SearchHit, SessionRecord
from myrm_tui.store.session_lock import SessionBusyError
from myrm_tui.store.store import Store, StoreError
from myrm_tui.store.vault import UnknownArtifactError, Vault, VaultError, VaultTamperedError
from myrm_tui.store.workspace import find_workspace_root

__all__ = [
    "ArtifactRecord",
    "EventRecord",
    "MessageRecord",
    "SearchHit",
    "SessionBusyError",
    "SessionRecord",
    "Store",
    "StoreError",
    "UnknownArtifactError",
    "Vault",
    "VaultError",
    "VaultTamperedError",
    "find_workspace_root",
]
