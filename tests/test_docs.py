"""The repository's docs stand alone: nothing cites a file a reader of this repository cannot open.

Why: comments, docstrings and docs once pointed at a design brief and a benchmark spec that
lived outside the repository; a reader (or a wheel user) had no way to follow them. The
definitions now live in docs/ and these tests keep it so.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from myrm_tui.cli import app

ROOT = Path(__file__).resolve().parent.parent
# Built from pieces so this file does not match itself.
FORBIDDEN = ("../" + "shared", "/work/" + "shared", "BENCHMARKS" + ".md")
# Recorded web pages and SVG snapshots are data, not prose anyone follows.
DATA_SUFFIXES = (".svg", ".png", ".jpg", ".gguf", ".db")
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def repository_files() -> list[Path]:
    """Tracked and new (not ignored) files; a plain walk when git is not there."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        names = [n for n in listed.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
            names += [os.path.relpath(os.path.join(folder, f), ROOT) for f in files]
    return [ROOT / n for n in names if not n.endswith(DATA_SUFFIXES) and (ROOT / n).is_file()]


def citations(path: Path) -> list[str]:
    """`line: word` for every forbidden citation in a text file (none in a binary one)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    return [f"{n}: {word}" for n, line in enumerate(text.splitlines(), 1) for word in FORBIDDEN if word in line]


def test_no_file_cites_documents_outside_the_repository():
    offenders = [f"{path.relative_to(ROOT)}:{hit}" for path in repository_files() for hit in citations(path)]
    assert offenders == [], "cite docs/ instead:\n" + "\n".join(offenders)


def test_the_scan_finds_each_citation(tmp_path):
    """The scan above is only worth something if it sees what it looks for."""
    sample = tmp_path / "note.py"
    sample.write_text(f"x = 1\n# see {FORBIDDEN[2]}\n# and {FORBIDDEN[0]}/a, {FORBIDDEN[1]}/b\n", encoding="utf-8")
    assert citations(sample) == [f"2: {FORBIDDEN[2]}", f"3: {FORBIDDEN[0]}", f"3: {FORBIDDEN[1]}"]
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe" + FORBIDDEN[2].encode())
    assert citations(tmp_path / "blob.bin") == []


def test_relative_links_in_the_docs_resolve():
    pages = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in MARKDOWN_LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_definitions_the_code_cites_exist():
    benchmarks = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for heading in ("## Definitions", "### Workloads", "### Contenders", "### Figures"):
        assert heading in benchmarks
    for figure in ("B1", "B2", "B3", "B4", "B5", "T1", "T2", "L1", "R_1", "R_verbatim", "Cost units"):
        assert f"| {figure} |" in benchmarks or f"**{figure}" in benchmarks, figure
    engine = (ROOT / "docs" / "context-engine.md").read_text(encoding="utf-8")
    assert "## Invariants" in engine
    for invariant in ("Provider-valid", "Within budget", "Lossless and reachable", "Anchors stay", "Byte-identical"):
        assert f"**{invariant}" in engine, invariant
    assert "**Append-only between events" in engine


def test_replay_help_points_at_the_format_document():
    result = CliRunner().invoke(app, ["replay", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "docs/replay-format.md" in result.output
    assert (ROOT / "docs" / "replay-format.md").is_file()
