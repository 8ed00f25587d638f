"""`.myrm/` is private whatever the umask, and ignored by git."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from myrm_tui.store import Store


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o777])
def test_layout_modes_ignore_umask(workspace: Path, umask: int):
    old = os.umask(umask)
    try:
        store = Store.open(workspace)
        try:
            session = store.create_session("m")
            store.append_message(session.id, {"role": "user", "content": "secret"}, tokens=1)
            handle = store.vault.put("artifact body\n")
            folder = workspace / ".myrm"
            assert store.root == folder
            assert _mode(folder) == 0o700
            assert _mode(folder / "artifacts") == 0o700
            assert _mode(folder / "sessions.db") == 0o600
            # While open, WAL files exist and must be as private as the database.
            assert _mode(folder / "sessions.db-wal") == 0o600
            assert _mode(folder / "sessions.db-shm") == 0o600
            assert _mode(folder / ".gitignore") == 0o600
            assert _mode(store.vault.path_of(handle)) == 0o600
            assert (folder / ".gitignore").read_text() == "*\n"
        finally:
            store.close()
    finally:
        os.umask(old)


def test_existing_loose_permissions_are_tightened(workspace: Path):
    Store.open(workspace).close()  # a real store (a 0-byte file is refused as damage)
    folder = workspace / ".myrm"
    os.chmod(folder, 0o755)
    db = folder / "sessions.db"
    os.chmod(db, 0o644)
    Store.open(workspace).close()
    assert _mode(folder) == 0o700
    assert _mode(db) == 0o600


def test_user_edited_gitignore_is_kept(workspace: Path):
    Store.open(workspace).close()
    gitignore = workspace / ".myrm" / ".gitignore"
    gitignore.write_text("*\n!config.toml\n")
    Store.open(workspace).close()
    assert gitignore.read_text() == "*\n!config.toml\n"
