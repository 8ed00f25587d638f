"""ls / find / grep compressors on real listings of a tree built in the test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.context.filters.conftest import filtered, run


@pytest.fixture
def tree(tmp_path: Path, needle: str) -> Path:
    root = tmp_path / "proj"
    for d, count in (("src", 30), ("tests", 12), ("assets/img", 400), ("docs", 5)):
        (root / d).mkdir(parents=True)
        for i in range(count):
            ext = "png" if "img" in d else "py"
            body = "".join(f"x = {k}  # TODO fix {k}\n" for k in range(8)) if d == "src" else "y = 1\n"
            (root / d / f"file_{i:03d}.{ext}").write_text(body)
    (root / "docs" / f"{needle}.md").write_text(f"TODO {needle}\n")
    return root


def test_ls_recursive_groups_by_directory(tree: Path, needle: str) -> None:
    out = run(["ls", "-R"], cwd=tree)
    result = filtered(out, 1200, "ls -R")
    assert result.kind == "ls"
    for header in ("./src:", "./tests:", "./docs:", "./assets/img:"):
        assert header in result.text
    assert needle in result.text  # small directories are shown whole
    assert "./assets/img (400)" in result.text
    assert "file_399.png" not in result.text


def test_find_counts_per_directory(tree: Path, needle: str) -> None:
    out = run(["find", ".", "-type", "f"], cwd=tree)
    result = filtered(out, 1000, "find . -type f | sort")
    assert result.kind == "find"
    assert "./assets/img/ (400)" in result.text
    assert needle in result.text
    assert sum(1 for ln in result.text.splitlines() if ln.startswith("./assets/img/")) <= 20


def test_grep_groups_matches_by_file(tree: Path, needle: str) -> None:
    out = run(["grep", "-rn", "TODO", "."], cwd=tree)
    assert out.count("\n") == 30 * 8 + 1
    result = filtered(out, 3000, "grep -rn TODO .")
    assert result.kind == "grep"
    assert "241 matches in 31 files" in result.text
    assert needle in result.text  # a file with one match is not crowded out
    for i in range(30):  # every file shows its first match before any shows its second
        assert re.search(rf"\./src/file_{i:03d}\.py:1:", result.text)
    assert "./src/file_000.py:8:" not in result.text
