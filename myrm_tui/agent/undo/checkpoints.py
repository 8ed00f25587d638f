"""Checkpoints: the pre-image of every file a turn's tools change, so the turn can be undone.

Before a file tool writes, the file's current bytes go to the vault (content-addressed, so an
unchanged file costs nothing twice) — or the fact that it did not exist. After the tool ran, one
CHECKPOINT event records (turn, path, before, after): `turn` is the id of the user message that
started the turn, `after` the sha256 of what the tool left (None: no file), which is how undo
later tells a file the user edited since from one it can safely restore.

bash is covered only in a git workspace (agent/undo/git_snapshots.py): a tree snapshot before and
after the call, and each file that differs gets the same event with its pre-image read from the
snapshot. Elsewhere bash changes are not recorded, and undo says so.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.tools.base import Tool, ToolContext, ToolError
from myrm_tui.agent.tools.files.paths import FencedPath, fence_writable
from myrm_tui.agent.undo.git_snapshots import GitSnapshotError, GitSnapshotter
from myrm_tui.store import event_kinds
from myrm_tui.store.constants import HANDLE_HEX_CHARS
from myrm_tui.store.vault import Vault

if TYPE_CHECKING:
    from myrm_tui.store.store import Store

_log = logging.getLogger(__name__)

# Tools whose `path` argument names the one file they change.
FILE_TOOLS = frozenset({"file_write", "file_edit"})
# The tool whose changes a git snapshot covers.
SHELL_TOOL = "bash"
SOURCE_FILE_TOOL = "file-tool"
SOURCE_GIT = "git-snapshot"


@dataclass(frozen=True)
class FileChange:
    """One CHECKPOINT event, typed."""

    event_id: int
    turn: int
    path: str  # workspace-relative ("/"-separated) or absolute when outside the workspace
    before: str | None  # vault handle of the pre-image; None: the file did not exist
    after: str | None  # sha256 hex of the bytes the tool left; None: no file
    source: str


def sha256_hex(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def bytes_at(fenced: FencedPath) -> bytes | None:
    """The regular file's bytes, read through a no-follow walk; None when there is none (a
    missing file, a link, a folder or a FIFO count as no file: nothing is read through a link)."""
    try:
        with fenced.open() as target:
            return target.read_if_file()
    except (OSError, ToolError):
        return None


def label_of(fenced: FencedPath) -> str:
    """How a change names its file: workspace-relative ("/"-separated), absolute outside it."""
    return "/".join(fenced.names) if fenced.in_workspace else str(fenced.path)


def changes_of(store: Store, session_id: str) -> list[FileChange]:
    """Every recorded change of the session, oldest first."""
    out = []
    for event in store.events(session_id, event_kinds.CHECKPOINT):
        data = event.data
        out.append(
            FileChange(
                event.id,
                int(data["turn"]),
                str(data["path"]),
                data.get("before"),
                data.get("after"),
                str(data.get("source", SOURCE_FILE_TOOL)),
            )
        )
    return out


@dataclass
class Pending:
    """What `before` captured, for `after` to complete."""

    kind: str  # "file" or "git"
    paths: tuple[FencedPath, ...] = ()
    befores: tuple[str | None, ...] = ()
    tree: str | None = None
    # Filled by `after` for a git snapshot: the files the call left changed (not deleted), so the
    # post-compaction reread shows them like files a file tool wrote (store/changed_files.py).
    changed: list[str] = field(default_factory=list)


class Checkpointer:
    """Owned by the agent; one per session. Failures never stop the tool: they come back as a
    sentence the agent shows, because an unrecorded change must not pass silently."""

    def __init__(self, store: Store, session_id: str, workspace: Path) -> None:
        self.store = store
        self.session_id = session_id
        self.workspace = workspace
        self._git: GitSnapshotter | None = None
        self._git_checked = False

    @property
    def git(self) -> GitSnapshotter | None:
        """Looked up at the first bash call (a subprocess), not for every agent built."""
        if not self._git_checked:
            self._git_checked = True
            self._git = GitSnapshotter.for_workspace(self.workspace, self.store.root, self.session_id)
        return self._git

    @property
    def vault(self) -> Vault | None:
        return self.store.vault

    def _vault(self) -> Vault:
        """The vault, for the steps that run only after `before` found one (a Pending exists)."""
        vault = self.vault
        assert vault is not None, "a checkpoint was started without a vault"
        return vault

    def before(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> tuple[Pending | None, str | None]:
        """Capture what `tool` may change; (pending, problem)."""
        if self.vault is None:
            return None, None
        try:
            if tool.name in FILE_TOOLS:
                try:
                    fenced = fence_writable(str(args.get("path", "")), ctx)
                except ToolError:
                    return None, None  # the tool refuses the same path itself
                return Pending("file", (fenced,), (self._keep(fenced),)), None
            if tool.name == SHELL_TOOL and self.git is not None:
                return Pending("git", tree=self.git.snapshot()), None
        except (OSError, GitSnapshotError) as exc:
            return None, f"no checkpoint for this {tool.name} call ({exc}); /undo cannot restore what it changes"
        return None, None

    def after(self, pending: Pending | None, turn: int) -> str | None:
        """Record what changed; a problem sentence or None."""
        if pending is None:
            return None
        try:
            if pending.kind == "file":
                self._record(turn, zip(pending.paths, pending.befores, strict=True), SOURCE_FILE_TOOL)
            elif self.git is not None and pending.tree is not None:
                tree = self.git.snapshot()
                rows = []
                for change in self.git.changes(pending.tree, tree):
                    before = self._vault().put(self.git.blob(change.before_blob)) if change.before_blob else None
                    rows.append((self._in_workspace(change.path), before))
                    if change.after_exists:
                        pending.changed.append(change.path)
                self._record(turn, rows, SOURCE_GIT)
        except (OSError, GitSnapshotError) as exc:
            return f"the changes of this call were not checkpointed ({exc}); /undo cannot restore them"
        return None

    def _in_workspace(self, relative: str) -> FencedPath:
        names = tuple(relative.split("/"))
        return FencedPath(relative, self.workspace, names, self.workspace.resolve().joinpath(*names))

    def _keep(self, fenced: FencedPath) -> str | None:
        data = bytes_at(fenced)
        return None if data is None else self._vault().put(data)

    def _record(self, turn: int, rows: Iterable[tuple[FencedPath, str | None]], source: str) -> None:
        for fenced, before in rows:
            after = sha256_hex(bytes_at(fenced))
            if (
                before is not None
                and after is not None
                and before == self._vault().HANDLE_PREFIX + after[:HANDLE_HEX_CHARS]
            ):
                continue  # the tool left the file as it was
            if before is None and after is None:
                continue
            self.store.append_event(
                self.session_id,
                event_kinds.CHECKPOINT,
                {
                    "turn": turn,
                    "path": label_of(fenced),
                    "before": before,
                    "after": after,
                    "source": source,
                },
            )
