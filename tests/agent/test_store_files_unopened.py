"""The model's file tools never open the session store's own files while the session runs.

Why: closing any descriptor of a file drops every POSIX lock the process holds on it. A
`file_read` of `.myrm/sessions.db-shm` (reads need no approval), a `grep` of `.myrm`, or a
workspace `grep` through a link to it that came with a repository, each opened and closed such a
descriptor inside the agent's process; the next process to read the store (`myrm sessions`, a
second window) then reset the shared index under the session (SIGBUS) or deleted the log it was
writing (rows lost, the file left corrupt). `fenced_files.HeldFiles` says how it is refused. Real
tool calls through `Agent.turn`, the locks checked from another process afterwards.
"""

from __future__ import annotations

from pathlib import Path

from myrm_tui.fenced_files import HeldFileError, open_root
from tests.agent.agent_helpers import drive, make_agent
from tests.store.lock_probe import DB_SHARED, SHM_DMS, lock_seen_from_another_process

CALLS = [
    ("file_read", {"path": ".myrm/sessions.db-shm"}),
    ("file_read", {"path": ".myrm/sessions.db"}),
    ("grep", {"pattern": "SQLite", "path": ".myrm"}),
    ("grep", {"pattern": "SQLite"}),  # the workspace, with a committed link to the -shm
    ("file_read", {"path": "notes.txt"}),
]


async def test_the_tools_leave_the_stores_locks_held(store, script, workspace: Path):
    (workspace / "notes.txt").symlink_to(workspace / ".myrm" / "sessions.db-shm")
    (workspace / "index.txt").symlink_to(Path(".myrm") / "sessions.db")
    model = script({"tool_calls": [{"name": n, "arguments": a} for n, a in CALLS]}, {"text": "done"})
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "look at the store", approve=True)

    db = workspace / ".myrm" / "sessions.db"
    assert lock_seen_from_another_process(db, DB_SHARED) == "held", "another process could delete the log"
    assert lock_seen_from_another_process(db.with_name("sessions.db-shm"), SHM_DMS) == "held"
    results = [m.message["content"] for m in store.messages(agent.session_id) if m.message["role"] == "tool"]
    assert len(results) == len(CALLS)
    for (name, args), content in zip(CALLS, results, strict=True):
        if name == "file_read" and args["path"].startswith(".myrm"):
            assert content.startswith("error: ") and "session store" in content, content


def test_the_store_files_are_neither_replaced_nor_removed(store, workspace: Path):
    with open_root(workspace / ".myrm") as folder:
        for name in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
            for act in (lambda n: folder.read_bytes(n), lambda n: folder.replace(n, b"x"), folder.unlink):
                try:
                    act(name)
                except HeldFileError:
                    continue
                raise AssertionError(f"{name} was opened, replaced or removed under the open store")
    store.create_session("still fine")


def test_a_second_store_of_the_workspace_keeps_the_first_ones_locks(store, workspace: Path):
    from myrm_tui.store import Store

    second = Store.open(workspace, read_only=True)
    second.close()
    db = workspace / ".myrm" / "sessions.db"
    assert lock_seen_from_another_process(db, DB_SHARED) == "held"
    assert lock_seen_from_another_process(db.with_name("sessions.db-shm"), SHM_DMS) == "held"


def test_the_seen_records_never_reread_a_store_file_swapped_in_as_a_link(store, workspace: Path):
    """The stale-edit guard re-reads files the model saw (an offer it accepted, the rereads held
    while the model answers) by their recorded path; a command can meanwhile swap such a file for
    a link to the store's -shm."""
    from myrm_tui.agent.read_registry import OFFERED, ReadRegistry, SeenRecordingReader
    from myrm_tui.context.workspace_reader import workspace_reader

    session = store.create_session("seen")
    shm = workspace / ".myrm" / "sessions.db-shm"
    offered, reread = workspace / "big.txt", workspace / "x.txt"
    for path in (offered, reread):
        path.write_text("hello\n")
    registry = ReadRegistry(store, session.id, workspace)
    registry.record(offered, offered.read_bytes(), OFFERED, "vault://0123456789ab")
    reader = SeenRecordingReader(workspace_reader(workspace), store, session.id, workspace)
    reader.hold()
    assert reader("x.txt") == "hello\n"
    for path in (offered, reread):  # what the model's bash command does meanwhile
        path.unlink()
        path.symlink_to(shm)
    registry.accept_offer("vault://0123456789ab")
    reader.release()
    # and the file swapped between the reread and its record (a reader that answers anyway)
    (workspace / "y.txt").symlink_to(shm)
    assert SeenRecordingReader(lambda raw: "hello\n", store, session.id, workspace)("y.txt") == "hello\n"
    assert lock_seen_from_another_process(shm, SHM_DMS) == "held"
    last = registry.last_seen(offered)
    assert last is None or last.how == OFFERED, "a link read as the offered file"


async def test_a_git_link_to_the_store_is_not_read_by_the_write_guard(store, script, workspace: Path):
    """Every write asks which paths are protected, which reads a worktree's `.git` file; a command
    can leave `.git` as a link to the store's -shm."""
    shm = workspace / ".myrm" / "sessions.db-shm"
    (workspace / ".git").symlink_to(shm)
    model = script(
        {"tool_calls": [{"name": "file_write", "arguments": {"path": "a.txt", "content": "x"}}]}, {"text": "ok"}
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "write it", approve=True)
    assert (workspace / "a.txt").read_text() == "x"
    assert lock_seen_from_another_process(shm, SHM_DMS) == "held"


async def test_a_named_artifact_linked_to_the_store_is_not_opened(store, script, workspace: Path):
    """ctx_inspect/ctx_expand of a handle a message names but nothing indexed describe the vault
    file; a command (unsandboxed) can leave a hard link to the store's -shm there under an
    artifact's name, a regular file the vault lists."""
    name, handle = "a" * 64, "vault://" + "a" * 12
    artifacts = workspace / ".myrm" / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shm = workspace / ".myrm" / "sessions.db-shm"
    (artifacts / name).hardlink_to(shm)
    calls = [{"name": tool, "arguments": {"handle": handle}} for tool in ("ctx_inspect", "ctx_expand")]
    model = script({"text": f"about {handle}", "tool_calls": calls}, {"text": "done"})
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "look", approve=True)
    assert lock_seen_from_another_process(shm, SHM_DMS) == "held"


def test_an_mcp_log_swapped_for_a_link_to_the_store_is_not_opened(store, workspace: Path, tmp_path: Path):
    """A stdio server's stderr log is read for its last line when it fails; the server (or any
    command) can replace it with a link to the store's -shm."""
    from myrm_tui.mcp.server_log import last_line

    shm = workspace / ".myrm" / "sessions.db-shm"
    (tmp_path / "mcp-x.log").symlink_to(shm)
    assert last_line(tmp_path / "mcp-x.log") == ""
    assert lock_seen_from_another_process(shm, SHM_DMS) == "held"


async def test_undo_skips_a_changed_file_now_linked_to_the_store(store, script, workspace: Path):
    """The turn wrote `notes.txt`; something unsandboxed then made it a hard link to the store's
    -shm (a regular file, so no symlink check sees it). /undo plans without opening it: that
    file is listed as blocking with the reason, the others are still offered, the lock held."""
    from myrm_tui.agent.undo import rewind as undo

    calls = [
        {"name": "file_write", "arguments": {"path": "notes.txt", "content": "new\n"}},
        {"name": "file_write", "arguments": {"path": "other.txt", "content": "x\n"}},
    ]
    model = script({"tool_calls": calls}, {"text": "done"})
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "write", approve=True)
    shm = workspace / ".myrm" / "sessions.db-shm"
    (workspace / "notes.txt").unlink()
    (workspace / "notes.txt").hardlink_to(shm)
    plan = undo.plan_last(store, agent.session_id, workspace)
    (skipped,) = plan.skipped
    assert skipped.path == "notes.txt" and skipped.blocking and "session store" in skipped.reason
    assert [f.path for f in plan.files] == ["other.txt"]
    assert lock_seen_from_another_process(shm, SHM_DMS) == "held"
