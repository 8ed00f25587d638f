"""Trust state as the tests read it: the loader's Optional fields, narrowed where a test needs a value."""

from __future__ import annotations

from myrm_tui.settings.config_files.loader import LoadedSettings
from myrm_tui.settings.trust import WorkspaceTrust


def trust_of(loaded: LoadedSettings) -> WorkspaceTrust:
    """The loader's trust state: set whenever a workspace is loaded."""
    assert loaded.workspace_trust is not None
    return loaded.workspace_trust


def digest_of(trust: WorkspaceTrust) -> str:
    """The digest to record: a workspace file that was read has one."""
    assert trust.digest is not None
    return trust.digest
