"""Git-tree snapshots of a git workspace, so what a bash call changed can be undone.

Why git and not a copy of every file: a bash command may touch any file, so the pre-image of
every file must exist before it runs. Git's object store already holds the committed ones; a
private index (`.myrm/checkpoints/<session>.index`) and a private object folder
(`.myrm/checkpoints/objects`, with the repository's own objects as an alternate) let `git add -A`
write only what differs from the repository, and its stat cache makes repeated snapshots cheap.
The user's index, refs and object store are never written.

What is covered is exactly what `git add -A` sees: tracked files and untracked files that are not
ignored, inside the repository. Ignored files (build output, `.env` when ignored), files outside
the workspace and submodule contents are not.

Every git call here runs on the host, outside the sandbox, in a repository commands may have
changed, so nothing in it may run code. The repository's own config can name programs git runs
(clean/smudge filters for the paths `.gitattributes` marks, fsmonitor, hooks, external diff), so
the snapshot calls never read it: git gets a private, empty git folder (`.myrm/checkpoints/git`)
with the repository as its work tree and the repository's objects as an alternate, and
HOST_GIT_ARGS on top (no hooks, no fsmonitor) for the two calls that ask the repository where its
top and its objects are. Only the user's own global and system config apply, as in their
terminal.

The private folders are walked without following links from the workspace (store/database/layout.py), and
git gets them as `/proc/self/fd/N` paths of those very handles (which it inherits): a
`.myrm/checkpoints` or `objects` committed as a link to elsewhere is refused, never written.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.agent.sandbox.git_env import HOST_GIT_ARGS
from myrm_tui.fenced_files import FenceError
from myrm_tui.store.database.layout import open_in_store
from myrm_tui.store.errors import StoreError

# The folder under `.myrm/` for the private index and objects.
CHECKPOINTS_DIR = "checkpoints"
_OBJECTS_DIR = "objects"
# The private git folder the snapshot calls use instead of the repository's (module docstring).
_GIT_DIR = "git"
_GIT_HEAD = "ref: refs/heads/myrm-checkpoints\n"
# Owner-only, like the rest of `.myrm/`: the objects are copies of the user's files.
PRIVATE_DIR_MODE = 0o700
# A snapshot that takes longer than this is abandoned (the bash call runs uncovered and the user
# is told): a huge untracked tree must not stall every bash call.
GIT_SNAPSHOT_TIMEOUT_S = 60.0
# git's name for "no blob" in diff-tree output.
_NULL_SHA = "0" * 40
# Submodule entries are commits, not files: their contents are not snapshotted.
_GITLINK_MODE = "160000"


class GitSnapshotError(Exception):
    """A snapshot could not be taken; the message says why in one sentence."""


@dataclass(frozen=True)
class TreeChange:
    path: str  # relative to the repository root, "/"-separated
    before_blob: str | None  # None: the file did not exist before
    after_exists: bool


@dataclass(frozen=True)
class GitSnapshotter:
    repo_root: Path
    private_dir: Path  # .myrm/checkpoints
    session_id: str

    @classmethod
    def for_workspace(cls, workspace: Path, myrm_dir: Path, session_id: str) -> GitSnapshotter | None:
        """A snapshotter when `workspace` is the top of a git work tree and git is installed
        (a bare `.git` folder that git does not recognise is not a repository)."""
        if shutil.which("git") is None or not (workspace / ".git").exists():
            return None
        try:
            done = subprocess.run(
                ["git", *HOST_GIT_ARGS, "rev-parse", "--show-toplevel"],
                cwd=workspace,
                capture_output=True,
                timeout=GIT_SNAPSHOT_TIMEOUT_S,
                check=False,
            )
        except (subprocess.TimeoutExpired, OSError):
            return None
        top = done.stdout.decode(errors="surrogateescape").strip()
        if done.returncode != 0 or not top or Path(top).resolve() != workspace.resolve():
            return None
        return cls(workspace, myrm_dir / CHECKPOINTS_DIR, session_id)

    @contextmanager
    def _private(self) -> Iterator[tuple[dict[str, str], tuple[int, ...]]]:
        """git's environment for the private index and objects, and the descriptors git must
        inherit for the /proc/self/fd paths in it to lead where they were checked."""
        index = f"{self.session_id}.index"
        try:
            with (
                open_in_store(self.private_dir.parent, self.private_dir.name, create=True) as folder,
                folder.child(_OBJECTS_DIR, create=True, mode=PRIVATE_DIR_MODE, chmod=True) as objects,
                folder.child(_GIT_DIR, create=True, mode=PRIVATE_DIR_MODE, chmod=True) as git_dir,
            ):
                if git_dir.lstat("HEAD") is None:
                    git_dir.replace("HEAD", _GIT_HEAD)
                with git_dir.child("refs", create=True, mode=PRIVATE_DIR_MODE):
                    pass
                found = folder.lstat(index)
                if found is not None and not stat.S_ISREG(found.st_mode):
                    folder.open_regular(index)  # raises the FenceError that says what is there
                env = dict(os.environ)
                repo_objects = str(self._repo_objects())
                env.update(
                    {
                        "GIT_DIR": git_dir.proc_path(),
                        "GIT_WORK_TREE": str(self.repo_root),
                        "GIT_INDEX_FILE": folder.proc_path(index),
                        "GIT_OBJECT_DIRECTORY": objects.proc_path(),
                        "GIT_ALTERNATE_OBJECT_DIRECTORIES": repo_objects,
                        "GIT_OPTIONAL_LOCKS": "0",
                    }
                )
                yield env, (folder.fd, objects.fd, git_dir.fd)
        except (StoreError, FenceError) as exc:
            raise GitSnapshotError(str(exc)) from None

    def _repo_objects(self) -> Path:
        out = self._git(["rev-parse", "--git-path", "objects"], env=None)
        path = Path(out.strip())
        return path if path.is_absolute() else (self.repo_root / path).resolve()

    def _git(self, args: list[str], env: dict[str, str] | None, fds: tuple[int, ...] = ()) -> str:
        try:
            done = subprocess.run(
                ["git", *HOST_GIT_ARGS, *args],
                cwd=self.repo_root,
                env=env,
                pass_fds=fds,
                capture_output=True,
                timeout=GIT_SNAPSHOT_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise GitSnapshotError(f"git {args[0]} took over {GIT_SNAPSHOT_TIMEOUT_S:.0f} s") from exc
        except OSError as exc:
            raise GitSnapshotError(f"git could not run: {exc}") from exc
        if done.returncode != 0:
            raise GitSnapshotError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[:200]}")
        return done.stdout.decode("utf-8", errors="surrogateescape")

    def snapshot(self) -> str:
        """The tree id of the work tree as it is now."""
        with self._private() as (env, fds):
            self._git(["add", "-A", "--ignore-errors", "."], env, fds)
            return self._git(["write-tree"], env, fds).strip()

    def changes(self, before: str, after: str) -> list[TreeChange]:
        if before == after:
            return []
        with self._private() as (env, fds):
            out = self._git(["diff-tree", "-r", "-z", "--no-renames", before, after], env, fds)
        fields = out.split("\0")
        changes: list[TreeChange] = []
        for head, path in zip(fields[0::2], fields[1::2], strict=False):
            if not head.startswith(":"):
                continue
            old_mode, new_mode, old_sha, new_sha, _status = head[1:].split(" ")
            if _GITLINK_MODE in (old_mode, new_mode):
                continue
            changes.append(TreeChange(path, None if old_sha == _NULL_SHA else old_sha, new_sha != _NULL_SHA))
        return changes

    def blob(self, sha: str) -> bytes:
        try:
            with self._private() as (env, fds):
                done = subprocess.run(
                    ["git", *HOST_GIT_ARGS, "cat-file", "blob", sha],
                    cwd=self.repo_root,
                    env=env,
                    pass_fds=fds,
                    capture_output=True,
                    timeout=GIT_SNAPSHOT_TIMEOUT_S,
                    check=False,
                )
        except (subprocess.TimeoutExpired, OSError) as exc:
            raise GitSnapshotError(f"git cat-file could not read {sha[:12]}: {exc}") from exc
        if done.returncode != 0:
            raise GitSnapshotError(f"git cat-file could not read {sha[:12]}")
        return done.stdout
