"""Checkpoints and undo: real tools through a scripted model, real store and vault, real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from myrm_tui.agent.events import Notice
from myrm_tui.agent.undo import rewind as undo
from myrm_tui.agent.undo.checkpoints import changes_of
from tests.agent.agent_helpers import drive, make_agent


def call(name: str, call_id: str = "c1", **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True, text=True).stdout


def git_init(workspace: Path) -> None:
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "t"],
        ["add", "-A"],
        ["commit", "-q", "-m", "start", "--allow-empty"],
    ):
        git(workspace, *args)


async def test_edit_write_create_then_undo_restores_every_file(store, workspace, script):
    (workspace / "app.py").write_text("print('hello')\n")
    (workspace / "notes.txt").write_text("old notes\n")
    model = script(
        {
            "tool_calls": [
                call("file_edit", "c1", path="app.py", old="hello", new="bye"),
                call("file_write", "c2", path="notes.txt", content="new notes\n"),
                call("file_write", "c3", path="src/new.py", content="x = 1\n"),
            ]
        },
        {"text": "done"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "change things")
    assert (workspace / "src/new.py").read_text() == "x = 1\n"

    plan = undo.plan_last(store, agent.session_id, workspace)
    assert {f.path: f.action for f in plan.files} == {
        "app.py": "restore",
        "notes.txt": "restore",
        "src/new.py": "delete",
    }
    assert not plan.conflicts
    app_diff = next(f.diff for f in plan.files if f.path == "app.py")
    assert "-print('bye')" in app_diff and "+print('hello')" in app_diff

    undo.apply(plan, store, agent.session_id, workspace)
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    assert (workspace / "notes.txt").read_text() == "old notes\n"
    assert not (workspace / "src/new.py").exists()
    # The undone turn is not offered again.
    assert undo.plan_last(store, agent.session_id, workspace).empty


async def test_undo_walks_back_one_turn_at_a_time(store, workspace, script):
    model = script(
        {"tool_calls": [call("file_write", "c1", path="a.txt", content="one\n")]},
        {"text": "ok"},
        {"tool_calls": [call("file_write", "c2", path="a.txt", content="two\n")]},
        {"text": "ok"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "first")
    await drive(agent, "second")
    first_turn, second_turn = sorted({c.turn for c in changes_of(store, agent.session_id)})

    plan = undo.plan_last(store, agent.session_id, workspace)
    assert plan.turns == (second_turn,)
    undo.apply(plan, store, agent.session_id, workspace)
    assert (workspace / "a.txt").read_text() == "one\n"
    plan = undo.plan_last(store, agent.session_id, workspace)
    assert plan.turns == (first_turn,) and plan.files[0].action == "delete"
    undo.apply(plan, store, agent.session_id, workspace)
    assert not (workspace / "a.txt").exists()


async def test_undo_after_a_later_manual_edit_warns_instead_of_clobbering(store, workspace, script):
    (workspace / "app.py").write_text("v1\n")
    model = script({"tool_calls": [call("file_write", path="app.py", content="v2\n")]}, {"text": "ok"})
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "write")
    (workspace / "app.py").write_text("v2 plus my own edit\n")

    plan = undo.plan_last(store, agent.session_id, workspace)
    assert [f.path for f in plan.conflicts] == ["app.py"]
    assert "your edits would be lost" in undo.summary(plan)
    with pytest.raises(undo.UndoConflict, match="app.py"):
        undo.apply(plan, store, agent.session_id, workspace)
    assert (workspace / "app.py").read_text() == "v2 plus my own edit\n"
    # Forced, it restores the pre-image.
    undo.apply(plan, store, agent.session_id, workspace, force=True)
    assert (workspace / "app.py").read_text() == "v1\n"


async def test_rewind_restores_files_to_before_an_earlier_message(store, workspace, script):
    (workspace / "a.txt").write_text("start\n")
    model = script(
        {"tool_calls": [call("file_write", "c1", path="a.txt", content="one\n")]},
        {"text": "ok"},
        {"tool_calls": [call("file_write", "c2", path="b.txt", content="b\n")]},
        {"text": "ok"},
        {"tool_calls": [call("file_write", "c3", path="a.txt", content="three\n")]},
        {"text": "ok"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    for text in ("first", "second", "third"):
        await drive(agent, text)
    users = [r.id for r in store.messages(agent.session_id) if r.message["role"] == "user"]

    plan = undo.plan_rewind(store, agent.session_id, workspace, users[1])
    assert {f.path for f in plan.files} == {"a.txt", "b.txt"}
    undo.apply(plan, store, agent.session_id, workspace)
    assert (workspace / "a.txt").read_text() == "one\n"  # as the first turn left it
    assert not (workspace / "b.txt").exists()


async def test_bash_changes_in_a_git_workspace_are_undone_delete_included(store, workspace, script):
    (workspace / "tracked.txt").write_text("tracked\n")
    (workspace / "doomed.txt").write_text("keep me\n")
    (workspace / ".gitignore").write_text("build/\n")
    git_init(workspace)
    (workspace / "untracked.txt").write_text("loose\n")
    command = (
        "rm doomed.txt && echo changed > tracked.txt && echo more >> untracked.txt && "
        "echo made > fresh.txt && mkdir -p build && echo out > build/o.txt"
    )
    model = script({"tool_calls": [call("bash", command=command)]}, {"text": "ok"})
    agent = make_agent(store, workspace, model, approval="yolo", sandbox="off")
    log = await drive(agent, "shell things")
    assert not [n for n in log.of(Notice) if "checkpoint" in n.text]

    plan = undo.plan_last(store, agent.session_id, workspace)
    # Ignored files are not covered (build/ is in .gitignore): only what git sees.
    assert {f.path: f.action for f in plan.files} == {
        "doomed.txt": "recreate",
        "tracked.txt": "restore",
        "untracked.txt": "restore",
        "fresh.txt": "delete",
    }
    undo.apply(plan, store, agent.session_id, workspace)
    assert (workspace / "doomed.txt").read_text() == "keep me\n"
    assert (workspace / "tracked.txt").read_text() == "tracked\n"
    assert (workspace / "untracked.txt").read_text() == "loose\n"
    assert not (workspace / "fresh.txt").exists()
    assert (workspace / "build/o.txt").exists()
    # The user's own index was not touched by the snapshots.
    assert git(workspace, "diff", "--cached", "--name-only") == ""


async def test_bash_outside_git_is_not_recorded(store, workspace, script):
    model = script({"tool_calls": [call("bash", command="echo x > made.txt")]}, {"text": "ok"})
    agent = make_agent(store, workspace, model, approval="yolo", sandbox="off")
    await drive(agent, "shell")
    assert (workspace / "made.txt").exists()
    assert undo.plan_last(store, agent.session_id, workspace).empty


async def test_a_fork_can_undo_the_turns_it_shares_with_its_parent(store, workspace, script):
    model = script(
        {"tool_calls": [call("file_write", "c1", path="a.txt", content="one\n")]},
        {"text": "ok"},
        {"tool_calls": [call("file_write", "c2", path="b.txt", content="b\n")]},
        {"text": "ok"},
    )
    agent = make_agent(store, workspace, model, approval="yolo")
    await drive(agent, "first")
    await drive(agent, "second")
    history = store.messages(agent.session_id)
    second = [i for i, r in enumerate(history) if r.message["role"] == "user"][1]
    fork = store.fork(agent.session_id, at_message=history[second - 1].id)  # ends before "second"

    plan = undo.plan_last(store, fork.id, workspace)
    assert [f.path for f in plan.files] == ["a.txt"]  # b.txt belongs to a turn the fork does not share
    undo.apply(plan, store, fork.id, workspace)
    assert not (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    assert undo.plan_last(store, fork.id, workspace).empty
