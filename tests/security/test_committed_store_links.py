"""Links committed inside `.myrm/` never make myrm touch a file outside the workspace.

`.myrm/` arrives with `git clone` like any folder of the repository. Each case plants one link
(the folder itself, the database or one of its sidecars, `locks/` or a lock file, `artifacts/`,
`.gitignore`, `checkpoints/`) pointing at a file or folder of the user's, then does what a plain
`myrm run` does (open the store, claim the session, store an artifact, snapshot around bash).
The store must refuse with a message naming what to remove, and the user's files must keep
their content, their mode and their folder's listing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from myrm_tui.store import Store
from myrm_tui.store.errors import StoreError
from tests.security.file_attacks import call, git, myrm, script_file, tree_state, turn

VICTIM_TEXT = "the user's own file\n"


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "home"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "keep.txt").write_text("kept\n")
    (outside / "victim").write_text(VICTIM_TEXT)
    os.chmod(outside / "victim", 0o644)
    os.chmod(outside / "dir", 0o755)
    return outside


def _existing_store(workspace: Path) -> str:
    """A store as a previous run left it (committed with the repository); its session id."""
    store = Store.open(workspace)
    try:
        session_id = store.create_session(model="scripted/x").id
        store.claim_session(session_id)
    finally:
        store.close()
    return session_id


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            child.unlink()
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def _open_and_write(workspace: Path, session_id: str | None) -> None:
    """What `myrm run` does with the store: open it, claim the session, store an artifact."""
    store = Store.open(workspace)
    try:
        sid = session_id or store.create_session(model="scripted/x").id
        store.claim_session(sid)
        store.vault.put("a spilled tool output")
    finally:
        store.close()


def _read_only(workspace: Path, _session_id: str | None) -> None:
    """What `myrm sessions` does: a read-only look."""
    Store.open(workspace, read_only=True).close()


# (case, where the link goes in .myrm ("" = .myrm itself), points at a folder, a store existed, what runs)
CASES: list[tuple[str, str, bool, bool, Callable[[Path, str | None], None]]] = [
    ("the .myrm folder", "", True, False, _open_and_write),
    ("sessions.db", "sessions.db", False, False, _open_and_write),
    ("sessions.db-wal", "sessions.db-wal", False, True, _open_and_write),
    ("sessions.db-shm", "sessions.db-shm", False, True, _open_and_write),
    ("sessions.db-shm, read-only open", "sessions.db-shm", False, True, _read_only),
    ("locks/", "locks", True, False, _open_and_write),
    ("the session's lock file", "locks/{sid}.lock", False, True, _open_and_write),
    ("artifacts/", "artifacts", True, False, _open_and_write),
    (".gitignore", ".gitignore", False, False, _open_and_write),
]


@pytest.mark.parametrize(("case", "where", "to_folder", "existed", "action"), CASES, ids=[c[0] for c in CASES])
def test_a_committed_link_in_the_store_touches_nothing_outside(
    tmp_path: Path, case: str, where: str, to_folder: bool, existed: bool, action: Callable[[Path, str | None], None]
):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = _outside(tmp_path)
    session_id = _existing_store(workspace) if existed else None
    link = workspace / ".myrm" / where.format(sid=session_id) if where else workspace / ".myrm"
    link.parent.mkdir(parents=True, exist_ok=True)
    _replace_with_link(link, outside / ("dir" if to_folder else "victim"))
    before = tree_state(outside)
    refused: StoreError | None = None
    try:
        action(workspace, session_id)
    except StoreError as exc:
        refused = exc
    assert tree_state(outside) == before, f"{case}: the user's files changed"
    assert refused is not None, f"{case}: the link was used without a word"
    assert "symbolic link" in str(refused) and f"remove {link}" in str(refused), str(refused)
    assert link.is_symlink(), "the link is the user's to remove; myrm does not replace it"


def test_a_committed_checkpoints_link_gets_no_git_objects(tmp_path: Path):
    """Around a bash call in a git workspace myrm snapshots the tree into `.myrm/checkpoints/`:
    a link there must not receive the index and objects (the call runs uncovered, and says so)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hi')\n")
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "start")
    outside = _outside(tmp_path)
    _existing_store(workspace)
    (workspace / ".myrm" / "checkpoints").symlink_to(outside / "dir")
    before = tree_state(outside)

    async def run() -> list[str]:
        log = await turn(workspace, tmp_path / "scripts", [call("bash", "c1", command="echo changed > app.py")])
        return [f.content for f in log.finished]

    import asyncio

    results = asyncio.run(run())
    assert (workspace / "app.py").read_text() == "changed\n", results  # the call itself ran
    assert tree_state(outside) == before


def test_myrm_run_refuses_a_linked_session_database_and_says_what_to_remove(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    outside = _outside(tmp_path)
    (workspace / ".myrm").mkdir()
    (workspace / ".myrm" / "sessions.db").symlink_to(outside / "victim")
    before = tree_state(outside)
    model = script_file(tmp_path / "scripts", {"text": "hello"})
    result = myrm(workspace, tmp_path / "user-config", "run", "--model", model, "hi")
    assert tree_state(outside) == before, "the user's file changed"
    assert result.returncode != 0
    assert "sessions.db is a symbolic link" in result.stderr and "remove " in result.stderr, result.stderr
