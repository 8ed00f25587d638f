"""The store's exception types, in a leaf module so every store module can raise them."""

from __future__ import annotations


class StoreError(Exception):
    """A store operation that cannot succeed (unknown session, bad fork point, unreadable DB)."""


class StoreDamagedError(StoreError):
    """The database file is corrupt (SQLite reports a malformed image, or a row does not decode):
    `myrm doctor` and `myrm sessions recover` are the way out."""


class VaultError(Exception):
    """Unknown, ambiguous or out-of-vault handle."""


class UnknownArtifactError(VaultError):
    """A well-formed handle that names no artifact (lets `exists()` tell it from bad input)."""


class VaultTamperedError(VaultError):
    """An artifact whose bytes no longer match the sha256 its name promises."""
