"""file_read / file_write / file_edit / grep / glob against real files in a tmp workspace."""

from __future__ import annotations

import os

import pytest

from myrm_tui.agent.tools.base import ToolContext, ToolError, validate_arguments
from myrm_tui.agent.tools.files.edit import FileEdit
from myrm_tui.agent.tools.files.read import FileRead
from myrm_tui.agent.tools.files.write import FileWrite
from myrm_tui.agent.tools.search import Glob, Grep
from tests.agent.agent_helpers import settings_for


async def test_file_read_whole_and_range(ctx, workspace):
    (workspace / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    whole = await FileRead().run({"path": "f.txt"}, ctx)
    assert whole.content.splitlines()[0] == "[f.txt · lines 1-10 of 10]"
    assert whole.content.splitlines()[1:] == [f"line {i}" for i in range(1, 11)]
    part = await FileRead().run({"path": "f.txt", "start_line": 3, "end_line": 5}, ctx)
    assert part.content.splitlines() == ["[f.txt · lines 3-5 of 10]", "line 3", "line 4", "line 5"]


async def test_file_read_big_file_is_cut_with_a_hint(workspace, store):
    ctx = ToolContext(workspace, settings_for(tool_output_cap=1000), store.vault)
    (workspace / "big.txt").write_text("".join(f"row {i:05d}\n" for i in range(1, 5001)))
    result = await FileRead().run({"path": "big.txt"}, ctx)
    assert len(result.content) < 1300
    assert "of 5,000]" in result.content.splitlines()[0]
    assert 'file_read("big.txt", start_line=' in result.content.splitlines()[-1]
    # following the hint continues exactly where the cut happened
    last_shown = int(result.content.splitlines()[-2].split()[1])
    nxt = await FileRead().run({"path": "big.txt", "start_line": last_shown + 1, "end_line": last_shown + 1}, ctx)
    assert nxt.content.splitlines()[1] == f"row {last_shown + 1:05d}"


async def test_file_read_binary_is_a_clear_error(ctx, workspace):
    (workspace / "img.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 100)
    with pytest.raises(ToolError, match="binary file"):
        await FileRead().run({"path": "img.bin"}, ctx)


async def test_file_read_vault_handle_and_range(ctx, store):
    handle = store.vault.put("".join(f"v{i}\n" for i in range(1, 101)))
    result = await FileRead().run({"path": handle, "start_line": 50, "end_line": 52}, ctx)
    assert result.content.splitlines() == [f"[{handle} · lines 50-52 of 100]", "v50", "v51", "v52"]
    with pytest.raises(ToolError, match="Cannot read vault://"):
        await FileRead().run({"path": "vault://0000000000ff"}, ctx)


async def test_file_read_missing_and_past_end(ctx, workspace):
    with pytest.raises(ToolError, match="does not exist"):
        await FileRead().run({"path": "nope.txt"}, ctx)
    (workspace / "s.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match="past the end"):
        await FileRead().run({"path": "s.txt", "start_line": 9}, ctx)


@pytest.mark.parametrize(
    "tool,args,why",
    [
        (FileRead(), {"path": "../outside.txt"}, "outside the workspace"),
        (FileRead(), {"path": "/etc/passwd"}, "outside the workspace"),
        (FileWrite(), {"path": "../outside.txt", "content": "x"}, "outside the workspace"),
        (FileEdit(), {"path": "/etc/passwd", "old": "root", "new": "toor"}, "outside the workspace"),
        # A link is looked through once to see where it leads: out of the workspace is refused.
        (FileRead(), {"path": "link/secret.txt"}, "elsewhere/secret.txt, outside the workspace"),
        (FileWrite(), {"path": "link/new.txt", "content": "x"}, "elsewhere/new.txt, outside the workspace"),
    ],
)
async def test_paths_outside_workspace_are_refused(tool, args, why, ctx, workspace, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("secret")
    (workspace / "link").symlink_to(outside)
    (tmp_path / "outside.txt").write_text("keep")
    with pytest.raises(ToolError, match=why):
        await tool.run(args, ctx)
    assert (tmp_path / "outside.txt").read_text() == "keep"
    assert not (outside / "new.txt").exists()


async def test_links_that_stay_inside_the_workspace_are_followed(ctx, workspace):
    """Repositories keep links inside themselves; the tools read and write where they lead."""
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("v1\n")
    (workspace / "README.md").symlink_to("docs/guide.md")
    (workspace / "current").symlink_to("docs", target_is_directory=True)
    assert "v1" in (await FileRead().run({"path": "README.md"}, ctx)).content
    await FileWrite().run({"path": "current/guide.md", "content": "v2\n"}, ctx)
    await FileEdit().run({"path": "README.md", "old": "v2", "new": "v3"}, ctx)
    assert (workspace / "docs" / "guide.md").read_text() == "v3\n"
    assert (workspace / "README.md").is_symlink() and (workspace / "current").is_symlink()


async def test_allow_outside_workspace_setting(workspace, tmp_path, store):
    (tmp_path / "outside.txt").write_text("hello outside\n")
    ctx = ToolContext(workspace, settings_for(allow_outside_workspace=True), store.vault)
    result = await FileRead().run({"path": "../outside.txt"}, ctx)
    assert "hello outside" in result.content


async def test_file_write_creates_parents_and_keeps_mode(ctx, workspace):
    result = await FileWrite().run({"path": "a/b/c.txt", "content": "one\ntwo\n"}, ctx)
    assert result.content.startswith("created a/b/c.txt (2 lines")
    assert (workspace / "a/b/c.txt").read_text() == "one\ntwo\n"
    # A new file is the user's work: the umask decides its mode (as their editor's would), not 0o600.
    mask = os.umask(0)
    os.umask(mask)
    assert os.stat(workspace / "a/b/c.txt").st_mode & 0o777 == 0o666 & ~mask
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o755)
    result = await FileWrite().run({"path": "run.sh", "content": "echo new\n"}, ctx)
    assert result.content.startswith("overwrote run.sh")
    assert script.read_text() == "echo new\n" and os.stat(script).st_mode & 0o777 == 0o755
    assert [p.name for p in workspace.iterdir() if "myrm-tmp" in p.name] == []


async def test_file_edit_exact_replace_and_preview_diff(ctx, workspace):
    f = workspace / "m.py"
    f.write_text("def f():\n    return 1\n")
    preview = FileEdit().preview({"path": "m.py", "old": "return 1", "new": "return 2"}, ctx)
    assert preview.diff is not None
    assert "-    return 1" in preview.diff and "+    return 2" in preview.diff
    assert f.read_text() == "def f():\n    return 1\n"  # preview changes nothing
    result = await FileEdit().run({"path": "m.py", "old": "return 1", "new": "return 2"}, ctx)
    assert result.content == "edited m.py: replaced 1 occurrence at line 2"
    assert f.read_text() == "def f():\n    return 2\n"


async def test_file_edit_no_match_names_the_nearest_line(ctx, workspace):
    f = workspace / "m.py"
    f.write_text("alpha = 1\ndef compute_total(items):\n    return sum(items)\n")
    with pytest.raises(ToolError) as err:
        await FileEdit().run({"path": "m.py", "old": "def compute_totals(items):", "new": "x"}, ctx)
    assert "not found" in str(err.value) and "most similar line is 2" in str(err.value)
    assert f.read_text().startswith("alpha = 1\n")


async def test_file_edit_multiple_matches_then_replace_all(ctx, workspace):
    f = workspace / "m.txt"
    f.write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(ToolError, match=r"matches 2 places in m.txt \(lines 1, 3\)"):
        await FileEdit().run({"path": "m.txt", "old": "x = 1", "new": "x = 9"}, ctx)
    assert f.read_text() == "x = 1\ny = 2\nx = 1\n"
    result = await FileEdit().run({"path": "m.txt", "old": "x = 1", "new": "x = 9", "replace_all": True}, ctx)
    assert "2 occurrences" in result.content and f.read_text() == "x = 9\ny = 2\nx = 9\n"


async def test_file_edit_missing_file_and_identical_text(ctx, workspace):
    with pytest.raises(ToolError, match="create it with file_write"):
        await FileEdit().run({"path": "none.txt", "old": "a", "new": "b"}, ctx)
    (workspace / "s.txt").write_text("a")
    with pytest.raises(ToolError, match="identical"):
        await FileEdit().run({"path": "s.txt", "old": "a", "new": "a"}, ctx)


def test_argument_validation_messages():
    with pytest.raises(ToolError, match="needs the argument"):
        validate_arguments(FileEdit(), {"path": "x", "old": "a"})
    with pytest.raises(ToolError, match="has no argument"):
        validate_arguments(FileRead(), {"path": "x", "lines": "1-3"})
    args: dict[str, object] = {"path": "x", "start_line": "3"}
    validate_arguments(FileRead(), args)
    assert args["start_line"] == 3  # "3" from a sloppy model is accepted as 3


async def test_grep_skips_git_myrm_and_binaries(ctx, workspace):
    (workspace / "src").mkdir()
    (workspace / "src/a.py").write_text("import os\nTODO = 1\n")
    (workspace / "src/b.txt").write_text("TODO later\n")
    (workspace / ".git").mkdir()
    (workspace / ".git/config").write_text("TODO in git\n")
    (workspace / "blob.bin").write_bytes(b"TODO\x00\x00")
    result = await Grep().run({"pattern": r"TODO"}, ctx)
    assert result.content.splitlines() == ["src/a.py:2: TODO = 1", "src/b.txt:1: TODO later"]
    only_py = await Grep().run({"pattern": "TODO", "glob": "*.py"}, ctx)
    assert only_py.content.splitlines() == ["src/a.py:2: TODO = 1"]
    with pytest.raises(ToolError, match="Invalid regular expression"):
        await Grep().run({"pattern": "("}, ctx)


async def test_grep_caps_matches(ctx, workspace):
    (workspace / "many.txt").write_text("hit\n" * 1000)
    lines = (await Grep().run({"pattern": "hit"}, ctx)).content.splitlines()
    assert len(lines) == 201 and lines[-1].startswith("[stopped at 200 matches")


async def test_glob_sorted_and_fenced(ctx, workspace):
    for name in ("b.py", "a.py", "sub/c.py", ".git/x.py"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("")
    result = await Glob().run({"pattern": "**/*.py"}, ctx)
    assert result.content.splitlines() == ["a.py", "b.py", "sub/c.py"]
    with pytest.raises(ToolError, match="relative to the workspace"):
        await Glob().run({"pattern": "../*"}, ctx)
    with pytest.raises(ToolError, match="relative to the workspace"):
        await Glob().run({"pattern": "/etc/*"}, ctx)
