"""AGENTS.md / CLAUDE.md like the peers read them: the user's config folder, the workspace root,
then the folders down to the current directory, in that order, each file once, under one cap
that says what it cut; and where the user sees the list (doctor, the health screen)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from myrm_tui.agent.setup.prompts import build_system_prompt, read_instructions
from myrm_tui.cli_commands.doctor.command import _instruction_lines
from myrm_tui.settings.paths import user_config_dir
from myrm_tui.tui.screens.health import instructions_line
from tests.hypothesis_profiles import examples

REPO_ROOT = Path(__file__).resolve().parents[2]


def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    user, ws = tmp_path / "user", tmp_path / "ws"
    deep = ws / "pkg" / "api"
    deep.mkdir(parents=True)
    user.mkdir()
    (user / "AGENTS.md").write_text("user: answer in British English\n")
    (user / "CLAUDE.md").write_text("user: never push\n")
    (ws / "AGENTS.md").write_text("root: run make test\n")
    (ws / "CLAUDE.md").write_text("root: claude notes\n")
    (ws / "pkg" / "AGENTS.md").write_text("pkg: keep imports sorted\n")
    (deep / "CLAUDE.md").write_text("api: every handler has a test\n")
    (ws / "other").mkdir()
    (ws / "other" / "AGENTS.md").write_text("other: must not be read\n")
    (deep / "v2").mkdir()
    (deep / "v2" / "AGENTS.md").write_text("below the cwd: must not be read\n")
    return user, ws, deep


def test_order_is_config_folder_root_then_down_to_the_cwd(tmp_path: Path):
    user, ws, deep = layout(tmp_path)
    found = read_instructions(ws, deep, user)
    assert [f.label for f in found.files] == [
        "config folder: AGENTS.md",
        "config folder: CLAUDE.md",
        "AGENTS.md",
        "CLAUDE.md",
        "pkg/AGENTS.md",
        "pkg/api/CLAUDE.md",
    ]
    text = found.text
    order = [
        text.index(marker)
        for marker in ("user: answer", "user: never", "root: run", "root: claude", "pkg: keep", "api: every")
    ]
    assert order == sorted(order)
    assert '<user_rules source="config folder: AGENTS.md">' in text
    assert '<workspace_rules source="pkg/api/CLAUDE.md">\napi: every handler has a test\n</workspace_rules>' in text
    assert "must not be read" not in text and not found.capped


def test_a_cwd_outside_the_workspace_reads_the_root_only(tmp_path: Path):
    user, ws, _ = layout(tmp_path)
    labels = [f.label for f in read_instructions(ws, tmp_path, user).files]
    assert labels[-2:] == ["AGENTS.md", "CLAUDE.md"] and "pkg/AGENTS.md" not in labels


def test_a_linked_file_is_read_once(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("shared rules\n")
    (ws / "CLAUDE.md").symlink_to(ws / "AGENTS.md")
    found = read_instructions(ws, ws, None)
    assert [f.label for f in found.files] == ["AGENTS.md"] and found.text.count("shared rules") == 1


def test_the_cap_cuts_one_file_and_names_the_ones_left_out(tmp_path: Path):
    user, ws, deep = layout(tmp_path)
    (ws / "AGENTS.md").write_text("R" * 170)
    found = read_instructions(ws, deep, user, cap=200)
    states = {f.label: (f.state, f.included) for f in found.files}
    assert states["config folder: AGENTS.md"][0] == "whole" and states["config folder: CLAUDE.md"][0] == "whole"
    assert states["AGENTS.md"][0] == "cut"
    assert states["pkg/api/CLAUDE.md"] == ("left out", 0)
    assert found.capped
    assert "[AGENTS.md cut at " in found.text and "instruction files share a 200-char cap" in found.text
    assert "left out by the 200-char cap: CLAUDE.md, pkg/AGENTS.md, pkg/api/CLAUDE.md" in found.text
    assert sum(f.included for f in found.files) == 200


@settings(max_examples=examples(40), deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=5),
    cap=st.integers(min_value=0, max_value=1000),
)
def test_the_cap_is_never_exceeded_and_nothing_is_dropped_silently(tmp_path_factory, sizes, cap):
    ws = tmp_path_factory.mktemp("ws")
    folder = ws
    for index, size in enumerate(sizes):
        (folder / "AGENTS.md").write_text(chr(ord("a") + index) * size)
        folder = folder / f"d{index}"
        folder.mkdir()
    found = read_instructions(ws, folder, None, cap=cap)
    assert sum(f.included for f in found.files) == min(cap, sum(sizes))
    for item in found.files:
        if item.state != "whole":
            assert item.label in found.text, "a cut or left-out file is named in the prompt"


def test_the_process_cwd_decides_the_folders(tmp_path: Path):
    user, ws, deep = layout(tmp_path)
    code = (
        "import sys; from pathlib import Path; from myrm_tui.agent.setup.prompts import build_system_prompt; "
        "sys.stdout.write(build_system_prompt('full', Path(sys.argv[1])).text)"
    )
    env = {**os.environ, "MYRM_CONFIG_DIR": str(user), "PYTHONPATH": str(REPO_ROOT)}
    at_deep = subprocess.run(
        [sys.executable, "-c", code, str(ws)], cwd=deep, env=env, capture_output=True, text=True, check=True
    ).stdout
    at_root = subprocess.run(
        [sys.executable, "-c", code, str(ws)], cwd=ws, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "api: every handler has a test" in at_deep and "user: never push" in at_deep
    assert "api: every handler" not in at_root and "root: run make test" in at_root
    again = subprocess.run(
        [sys.executable, "-c", code, str(ws)], cwd=deep, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert again == at_deep, "the same files give the same bytes (prompt cache)"


def test_doctor_and_health_list_them(tmp_path: Path, monkeypatch):
    _, ws, deep = layout(tmp_path)
    (user_config_dir()).mkdir(parents=True, exist_ok=True)
    (user_config_dir() / "AGENTS.md").write_text("mine\n")
    monkeypatch.chdir(deep)
    lines = _instruction_lines(ws)
    assert lines[0] == f"  ✓ {user_config_dir() / 'AGENTS.md'}: 4 chars"
    assert any(line.endswith(f"{deep / 'CLAUDE.md'}: 29 chars") for line in lines)
    assert len(lines) == 5
    health = instructions_line(ws)
    assert health.startswith("Instruction files: config folder: AGENTS.md (4 chars) · AGENTS.md (19 chars)")
    assert "pkg/api/CLAUDE.md (29 chars)" in health
    (ws / "AGENTS.md").write_text("x" * 50_000)
    capped = _instruction_lines(ws)
    assert any("AGENTS.md: 39,996 of 50,000 chars (cut by the cap)" in line for line in capped)
    assert "instruction files share a 40,000-char cap" in capped[-1]
    assert "left out" in instructions_line(ws)


def test_build_reads_the_config_folder(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    user_config_dir().mkdir(parents=True, exist_ok=True)
    (user_config_dir() / "CLAUDE.md").write_text("Prefer small commits.\n")
    assert (
        '<user_rules source="config folder: CLAUDE.md">\nPrefer small commits.\n</user_rules>'
        in build_system_prompt("full", ws).text
    )
