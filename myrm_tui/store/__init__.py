"""The canonical, lossless session log: SQLite (WAL) + a content-addressed artifact vault.

The names below load on first use (PEP 562): `myrm` finds the workspace root
(`store.workspace`) before its first frame, and importing any `myrm_tui.store.*` module must not
pull in SQLite, the store and the vault (~0.1 s) before that frame.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from myrm_tui.store.database.session_lock import SessionBusyError
    from myrm_tui.store.records import ArtifactRecord, EventRecord, MessageRecord, SearchHit, SessionRecord
    from myrm_tui.store.store import Store, StoreError
    from myrm_tui.store.vault import UnknownArtifactError, Vault, VaultError, VaultTamperedError
    from myrm_tui.store.workspace import find_workspace_root

# Each exported name, by the submodule that defines it.
_HOMES = {
    "ArtifactRecord": "records",
    "EventRecord": "records",
    "MessageRecord": "records",
    "SearchHit": "records",
    "SessionRecord": "records",
    "SessionBusyError": "database.session_lock",
    "Store": "store",
    "StoreError": "store",
    "UnknownArtifactError": "vault",
    "Vault": "vault",
    "VaultError": "vault",
    "VaultTamperedError": "vault",
    "find_workspace_root": "workspace",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
