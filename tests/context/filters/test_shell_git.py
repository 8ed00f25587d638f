"""git compressors on real git output from a repository built in the test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.context.filters.conftest import filtered, run

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "GIT_PAGER": "cat",
}


def git(repo: Path, *args: str) -> str:
    return run(["git", *args], cwd=repo, env=GIT_ENV)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    for name in ("alpha", "beta", "gamma"):
        (tmp_path / f"{name}.py").write_text("".join(f"def {name}_{i}():\n    return {i}\n\n" for i in range(150)))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "initial import")
    return tmp_path


def test_git_diff_keeps_headers_and_changes_and_needle(repo: Path, needle: str) -> None:
    for name in ("alpha", "beta", "gamma"):
        path = repo / f"{name}.py"
        # a small edit every 12 functions: many hunks, like a real refactor
        text = "\n".join(
            ln.replace("return", "return int(") + ")" if i % 36 == 1 else ln
            for i, ln in enumerate(path.read_text().splitlines())
        )
        path.write_text(text + "\n")
    beta = (repo / "beta.py").read_text().splitlines()
    beta[3:3] = [f"raise RuntimeError('{needle}')"]  # an error line in beta's first hunk
    (repo / "beta.py").write_text("\n".join(beta) + "\n")
    out = git(repo, "diff")
    assert len(out) > 5000
    budget = 2500
    result = filtered(out, budget, "git diff")
    assert result.kind == "git-diff"
    for name in ("alpha", "beta", "gamma"):
        assert f"diff --git a/{name}.py b/{name}.py" in result.text
    assert "@@ " in result.text
    assert needle in result.text  # every file shows its first hunk
    assert "3 files changed" in result.text  # the stat summary marker
    assert not re.search(r"^index [0-9a-f]+\.\.", result.text, re.MULTILINE)  # index lines dropped first
    assert result.important_lines >= 3


def test_git_status_drops_hints_keeps_sections(repo: Path, needle: str) -> None:
    (repo / "alpha.py").write_text("changed\n")
    (repo / "staged.txt").write_text("x\n")
    git(repo, "add", "staged.txt")
    (repo / "new").mkdir()
    for i in range(400):
        (repo / "new" / f"untracked_{i:03d}.txt").write_text("u\n")
    (repo / f"{needle}.txt").write_text("n\n")
    out = git(repo, "status", "--untracked-files=all")
    assert '(use "git' in out
    result = filtered(out, 2000, "git status --untracked-files=all")
    assert result.kind == "git-status"
    assert "On branch main" in result.text
    for section in ("Changes to be committed:", "Changes not staged for commit:", "Untracked files:"):
        assert section in result.text
    assert "staged.txt" in result.text and "alpha.py" in result.text
    assert '(use "git' not in result.text
    assert "Untracked files 401" in result.text  # per-section count


def test_git_status_porcelain(repo: Path) -> None:
    for i in range(300):
        (repo / f"u{i:03d}.txt").write_text("u\n")
    (repo / "alpha.py").write_text("changed\n")
    out = git(repo, "status", "--porcelain")
    result = filtered(out, 600, "git status --porcelain")
    assert " M alpha.py" in result.text
    assert "?? ×300" in result.text


def test_git_log_one_line_per_commit(repo: Path, needle: str) -> None:
    for i in range(80):
        (repo / "log.txt").write_text(f"{i}\n")
        git(repo, "add", "log.txt")
        subject = f"fix bug {i} {needle}" if i == 79 else f"change number {i}"
        git(repo, "commit", "-q", "-m", subject, "-m", "A longer body paragraph explaining the change.\nMore.")
    out = git(repo, "log")
    budget = 3000
    result = filtered(out, budget, "git log")
    assert result.kind == "git-log"
    assert "81 commits" in result.text
    assert needle in result.text  # the newest commit's subject
    assert "Author:" not in result.text and "longer body" not in result.text
    commits = re.findall(r"^commit [0-9a-f]{40}$", result.text, re.MULTILINE)
    assert len(commits) >= 10
    oneline = git(repo, "log", "--oneline")
    small = filtered(oneline * 3, 500, "git log --oneline")
    assert small.kind == "git-log"


def test_git_push_style_progress_is_dropped(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    remote = tmp_path_factory.mktemp("remote")
    git(remote, "init", "-q", "--bare")
    git(repo, "remote", "add", "origin", str(remote))
    out = git(repo, "push", "--progress", "origin", "main")
    padded = out + "\n".join(f"Writing objects: {p}% ({p}/100)" for p in range(100)) + "\n"
    result = filtered(padded, max(200, len(out) // 2 + 200), "git push origin main")
    assert result.kind == "git"
    assert "main -> main" in result.text
    assert "Writing objects: 50%" not in result.text
