"""grep and glob never follow a symlink out of the workspace, under every approval policy.

A cloned repository can commit symlinks (`docs -> /home/you/.ssh`, `notes.txt -> /etc/passwd`);
git recreates them on checkout. file_read refuses such paths; grep and glob walked straight
through them. Real files and links in a temp folder, real tool calls through the agent loop.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from myrm_tui.agent.permissions.approvals import POLICIES
from myrm_tui.agent.tools.base import ToolContext, ToolError
from myrm_tui.agent.tools.files.read import FileRead
from myrm_tui.agent.tools.search import Glob, Grep
from tests.agent.agent_helpers import drive, make_agent, settings_for

SECRET = "TOP-SECRET-TOKEN"
PASSWD = "root:x:0:0:SECRET-PASSWD"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "deeper").mkdir(parents=True)
    (folder / "credentials.txt").write_text(f"api = {SECRET}\n")
    (folder / "deeper" / "id_rsa").write_text(f"-----BEGIN {SECRET}-----\n")
    (tmp_path / "passwd").write_text(PASSWD + "\n")
    return folder


@pytest.fixture
def tree(workspace: Path, outside: Path) -> Path:
    """The clone: ordinary files, links out (a folder, a file, a relative one), links in."""
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("TOKEN = 'inside'\n")
    (workspace / "docs").symlink_to(outside)
    (workspace / "notes.txt").symlink_to(outside.parent / "passwd")
    (workspace / "src" / "up.txt").symlink_to(Path("../../outside/credentials.txt"))
    (workspace / "same.py").symlink_to(workspace / "src" / "app.py")  # inside: still searched
    (workspace / "loop").symlink_to(workspace)
    return workspace


# Every way a search could touch the outside through those links.
WALKS = [
    ("grep", {"pattern": "SECRET|root:|TOKEN"}),
    ("grep", {"pattern": ".", "glob": "*.txt"}),
    ("grep", {"pattern": ".", "path": "src"}),
    ("glob", {"pattern": "**/*"}),
    ("glob", {"pattern": "*"}),
    ("glob", {"pattern": "docs/*"}),
    ("glob", {"pattern": "docs/**"}),
    ("glob", {"pattern": "*/deeper/*"}),
    ("glob", {"pattern": "**/*.txt"}),
    ("glob", {"pattern": "loop/**/cred*.txt"}),
]
EXPLICIT = [  # naming the link itself: refused like file_read (allow_outside_workspace is off)
    ("grep", {"pattern": ".", "path": "docs"}),
    ("grep", {"pattern": ".", "path": "notes.txt"}),
    ("file_read", {"path": "notes.txt"}),
]
LEAKS = (SECRET, "SECRET-PASSWD", "credentials", "id_rsa", "root:")  # none is in a pattern (echoed)


def leaked(text: str) -> list[str]:
    return [word for word in LEAKS if word in text]


@pytest.mark.parametrize("policy", POLICIES)
async def test_nothing_from_outside_under_any_policy(store, script, tree, policy):
    calls = [{"name": name, "arguments": args} for name, args in WALKS + EXPLICIT]
    model = script({"tool_calls": calls}, {"text": "done"})
    agent = make_agent(store, tree, model, approval=policy)
    await drive(agent, "look around", approve=True)
    results = [m.message["content"] for m in store.messages(agent.session_id) if m.message["role"] == "tool"]
    assert len(results) == len(calls)
    for (name, args), content in zip(WALKS + EXPLICIT, results, strict=False):
        assert leaked(content) == [], (name, args, content)
    grep_all = results[0].splitlines()
    assert "same.py:1: TOKEN = 'inside'" in grep_all and "src/app.py:1: TOKEN = 'inside'" in grep_all
    assert grep_all[-1] == "[3 symlink(s) pointing outside the workspace not followed]"
    for (name, _args), content in zip(EXPLICIT, results[len(WALKS) :], strict=True):
        # file_read never goes through a link at all (docs/security.md, "File writes and undo")
        why = "is a symbolic link" if name == "file_read" else "outside the workspace"
        assert why in content and content.startswith("error: ")


async def test_a_walk_stays_inside_even_when_outside_paths_are_allowed(tree, outside):
    """allow_outside_workspace lets the user name an outside path; a walk of the workspace
    still never wanders out through a link (the clone chose the link, not the user)."""
    ctx = ToolContext(workspace=tree, settings=settings_for(approval="yolo", allow_outside_workspace=True), vault=None)
    for name, args in WALKS:
        tool = Grep() if name == "grep" else Glob()
        content = (await tool.run(dict(args), ctx)).content
        assert leaked(content) == [], (name, args, content)
    # explicitly named, it is the user's allowed outside folder (the file_read rule)
    named = await Grep().run({"pattern": SECRET, "path": str(outside)}, ctx)
    assert f"{outside}/credentials.txt:1: api = {SECRET}" in named.content.splitlines()
    # file_read never reads through a link, even then: the target is read by its own path.
    with pytest.raises(ToolError, match="notes.txt is a symbolic link"):
        await FileRead().run({"path": "notes.txt"}, ctx)
    read = await FileRead().run({"path": str(outside.parent / "passwd")}, ctx)
    assert PASSWD in read.content


async def test_glob_lists_links_inside_and_counts_the_ones_out(tree):
    ctx = ToolContext(workspace=tree, settings=settings_for(), vault=None)
    everything = (await Glob().run({"pattern": "**/*"}, ctx)).content.splitlines()
    assert everything == [
        "loop",
        "same.py",
        "src",
        "src/app.py",
        "[3 symlink(s) pointing outside the workspace not followed]",
    ]
    none = (await Glob().run({"pattern": "docs/*"}, ctx)).content.splitlines()
    assert none == ["no files match 'docs/*'", "[1 symlink(s) pointing outside the workspace not followed]"]


async def test_grep_skips_fifos_and_devices(tree):
    """A FIFO (made by an earlier bash call) would block grep forever on open()."""
    os.mkfifo(tree / "src" / "pipe")
    (tree / "src" / "zero").symlink_to("/dev/zero")
    ctx = ToolContext(workspace=tree, settings=settings_for(), vault=None)
    result = await Grep().run({"pattern": "TOKEN", "path": "src"}, ctx)
    assert result.content.splitlines() == [
        "src/app.py:1: TOKEN = 'inside'",
        "[2 symlink(s) pointing outside the workspace not followed]",
    ]


async def test_a_link_loop_named_directly_is_a_clear_error(workspace):
    (workspace / "a").symlink_to(workspace / "b")
    (workspace / "b").symlink_to(workspace / "a")
    ctx = ToolContext(workspace=workspace, settings=settings_for(), vault=None)
    assert (await Grep().run({"pattern": "x"}, ctx)).content.startswith("no matches")
    with pytest.raises(ToolError, match="symlink loop"):
        await Grep().run({"pattern": "x", "path": "a"}, ctx)
