"""Declarative (user) filters on captured real outputs, like the built-in compressor tests: run a
real command, apply the filter through `filter_output` / the spill path, check what is kept and
dropped, and that the vault still holds the whole output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from myrm_tui.context.filters import declarative, filter_output, is_marker_line
from myrm_tui.context.rows.ingest import spill_text
from myrm_tui.settings.config_files.filter_files import read_filter_file
from myrm_tui.settings.config_files.problems import ConfigProblem
from myrm_tui.settings.sections.output_filters import FilterSpec
from myrm_tui.store.vault import Vault
from tests.context.filters.conftest import assert_real_excerpt


def spec_from(tmp_path: Path, name: str, text: str) -> FilterSpec:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    problems: list[ConfigProblem] = []
    spec = read_filter_file(path, "user", problems)
    assert spec is not None, problems
    return spec


def chosen(*specs: FilterSpec) -> tuple[FilterSpec, ...]:
    """The session's filters for one test (what `Settings.output_filters` carries)."""
    return specs


def run(argv: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120)
    return done.stdout + done.stderr


def shown_real(text: str) -> list[str]:
    return [line for line in text.split("\n") if not is_marker_line(line)]


def test_ls_filter_drops_symlinks_and_keeps_the_rest(tmp_path):
    output = run(["ls", "-la", "/usr/bin"])
    lines = output.splitlines()
    links = [ln for ln in lines if ln.startswith("l")]
    files = [ln for ln in lines if ln.startswith("-")]
    assert len(links) > 5 and len(files) > 5, "this machine's /usr/bin has files and symlinks"
    filters = chosen(spec_from(tmp_path, "no-links", "match.prefix = 'ls -la'\ndrop = ['^l']\n"))
    budget = len(output) - 1
    result = filter_output(
        output, tool="bash", arguments={"command": "ls -la /usr/bin"}, budget_chars=budget, filters=filters
    )
    assert result is not None and result.kind == "filter no-links"
    assert_real_excerpt(result, output, budget)
    shown = shown_real(result.text)
    assert not any(line.startswith("l") for line in shown)
    assert files[0] in shown and files[-1] in shown
    assert "dropped by the filter" in result.text


def test_pytest_filter_keeps_failures_through_the_vault(tmp_path):
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', range(300))\n"
        "def test_many(n):\n"
        "    assert n != 137, 'one hundred thirty-seven is unlucky'\n",
        encoding="utf-8",
    )
    command = "python -m pytest -v -p no:cacheprovider test_tiny.py"
    output = run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_tiny.py"], cwd=tmp_path)
    assert "PASSED" in output and "FAILED" in output
    filters = chosen(
        spec_from(
            tmp_path,
            "pytest-failures",
            "match.command = '\\bpytest\\b'\ndrop = [' PASSED ']\nkeep = ['FAILED', 'unlucky']\ntail = 1\n",
        )
    )
    vault = Vault(tmp_path / "vault")
    text, handle = spill_text(
        output, tool="bash", arguments={"command": command}, cap_chars=4000, vault=vault, filters=filters
    )
    assert handle is not None and vault.read_text(handle) == output  # the whole output stays recoverable
    header, body = text.split("\n", 1)
    assert f"full: {handle}" in header and "filter pytest-failures excerpt" in header
    shown = shown_real(body)
    assert not any(" PASSED " in line for line in shown)
    assert any("test_many[137] FAILED" in line for line in shown)
    assert any("unlucky" in line for line in shown)
    assert shown[-1] == output.splitlines()[-1]  # tail = 1: how the run ended


def test_pip_list_filter_keeps_named_packages_and_head(tmp_path):
    output = run([sys.executable, "-m", "pip", "list"])
    lines = output.splitlines()
    assert lines[0].startswith("Package") and len(lines) > 20
    filters = chosen(
        spec_from(tmp_path, "pip-mine", "match.command = 'pip list'\nkeep = ['^(?:textual|litellm) ']\nhead = 2\n")
    )
    result = filter_output(
        output, tool="bash", arguments={"command": "python -m pip list"}, budget_chars=len(output) - 1, filters=filters
    )
    assert result is not None
    shown = shown_real(result.text)
    assert shown[:2] == lines[:2]
    assert sorted(shown[2:]) == sorted(ln for ln in lines if ln.startswith(("textual ", "litellm ")))


def test_collapse_repeats_on_a_real_output(tmp_path):
    output = run([sys.executable, "-c", "print('start'); [print('retrying...') for _ in range(400)]; print('done')"])
    filters = chosen(spec_from(tmp_path, "retries", "match.prefix = 'python -c'\ncollapse_repeats = true\n"))
    result = filter_output(
        output, tool="bash", arguments={"command": "python -c '...'"}, budget_chars=1000, filters=filters
    )
    assert result is not None
    assert result.text.split("\n") == [
        "start",
        "retrying...",
        "… 399 lines omitted (lines 3–401; the line above again, ×400 in a row) …",
        "done",
    ]


def test_max_lines_and_fit_still_bound_the_excerpt(tmp_path):
    output = run(["seq", "1", "5000"])
    filters = chosen(spec_from(tmp_path, "seq", "match.prefix = 'seq'\nkeep = ['7$']\nmax_lines = 30\n"))
    result = filter_output(output, tool="bash", arguments={"command": "seq 1 5000"}, budget_chars=2000, filters=filters)
    assert result is not None
    assert_real_excerpt(result, output, 2000)
    shown = shown_real(result.text)
    assert len(shown) == 30 and all(line.endswith("7") for line in shown)


def test_a_filter_that_drops_everything_still_shows_how_it_ended(tmp_path):
    output = run(["seq", "1", "3000"])
    filters = chosen(spec_from(tmp_path, "all", "match.prefix = 'seq'\ndrop = ['.']\n"))
    result = filter_output(output, tool="bash", arguments={"command": "seq 1 3000"}, budget_chars=500, filters=filters)
    assert result is not None and shown_real(result.text) == ["3000"]


def test_user_filter_beats_the_builtin_and_others_are_untouched(tmp_path):
    output = run(["ls", "-la", "/usr/bin"])
    builtin = filter_output(output, tool="bash", arguments={"command": "ls -la /usr/bin"}, budget_chars=3000)
    assert builtin is not None and builtin.kind == "ls"
    filters = chosen(spec_from(tmp_path, "mine", "match.prefix = 'ls'\nhead = 3\n"))
    mine = filter_output(
        output, tool="bash", arguments={"command": "cd /tmp && ls -la /usr/bin"}, budget_chars=3000, filters=filters
    )
    assert mine is not None and mine.kind == "filter mine"
    other = filter_output(
        output, tool="bash", arguments={"command": "lsblk; cat x"}, budget_chars=3000, filters=filters
    )
    assert other is not None and other.kind != "filter mine"  # `ls` is a whole word, not `lsblk`
    not_shell = filter_output(output, tool="file_read", arguments={"command": "ls"}, budget_chars=3000, filters=filters)
    assert not_shell is not None and not_shell.kind != "filter mine"


def test_tool_name_filter_for_a_non_shell_tool(tmp_path):
    output = "\n".join(f"issue {i}: {'open' if i % 10 else 'BLOCKER'}" for i in range(2000))
    filters = chosen(spec_from(tmp_path, "jira", "match.tool = 'mcp__jira__search'\nkeep = ['BLOCKER']\n"))
    result = filter_output(output, tool="mcp__jira__search", arguments={}, budget_chars=5000, filters=filters)
    assert result is not None and result.kind == "filter jira"
    assert all("BLOCKER" in line for line in shown_real(result.text))
    other = filter_output(output, tool="bash", arguments={"command": "x"}, budget_chars=5000, filters=filters)
    assert other is not None and other.kind != "filter jira"


def test_first_matching_filter_wins_and_env_assignments_are_skipped(tmp_path):
    first = spec_from(tmp_path, "first", "match.prefix = 'make test'\nhead = 1\n")
    second = spec_from(tmp_path, "second", "match.command = 'make'\nhead = 2\n")
    filters = chosen(first, second)
    assert declarative.pick("bash", "cd src && CI=1 make test -j4 | tail", filters=filters) is first
    assert declarative.pick("bash", "make lint", filters=filters) is second
    assert declarative.pick("bash", "echo hi", filters=filters) is None


def test_no_filters_changes_nothing():
    assert declarative.pick("bash", "ls") is None


def test_head_and_tail_longer_than_the_output_keep_every_line(tmp_path):
    output = "\n".join(f"line {i}" for i in range(40))
    filters = chosen(spec_from(tmp_path, "short", "match.tool = 't'\ndrop = ['[02468]$']\nhead = 50\ntail = 50\n"))
    spec = declarative.pick("t", None, filters=filters)
    assert spec is not None
    excerpt = declarative.compress(spec, output.splitlines())
    assert [p.text for p in excerpt.pieces if not p.is_marker] == [f"line {i}" for i in range(1, 40, 2)]


def test_max_lines_counts_a_collapsed_run_once(tmp_path):
    output = "\n".join(["a"] * 100 + ["b", "c"])
    filters = chosen(spec_from(tmp_path, "cap", "match.tool = 't'\ncollapse_repeats = true\nmax_lines = 3\n"))
    result = filter_output(output, tool="t", arguments={}, budget_chars=150, filters=filters)
    assert result is not None and shown_real(result.text) == ["a", "b", "c"]
