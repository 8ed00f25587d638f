"""Filter files are checked at load: every bad input is one clear problem naming the file and
the key, that filter is skipped, the others load, and nothing raises. Workspace filters wait
for the workspace's trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from myrm_tui.settings import trust as T
from myrm_tui.settings.config_files.filter_files import (
    USER,
    WORKSPACE,
    load_filter_files,
    user_filters_dir,
    workspace_filters_dir,
    workspace_filters_trusted,
)

GOOD = "match.prefix = 'make'\nkeep = ['error']\n"


def write(folder: Path, name: str, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, user = tmp_path / "ws", tmp_path / "user"
    workspace.mkdir()
    user.mkdir()
    return workspace, user


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("match.prefix = 'make'\nkeep = ['a']\nkep = ['b']\n", "unknown key `kep` (did you mean `keep`?)"),
        ("keep = ['a']\n", "`match` is missing"),
        ("match = 'make'\nkeep = ['a']\n", "`match` must be a table"),
        ("match.regex = 'make'\nkeep = ['a']\n", "unknown key `match.regex`"),
        ("match = { prefix = 'a', tool = 'b' }\nkeep = ['a']\n", "exactly one of"),
        ("match.prefix = '  '\nkeep = ['a']\n", "`match.prefix` must be a non-empty string"),
        ("match.tool = 3\nkeep = ['a']\n", "`match.tool` must be a non-empty string, not 3 (a number)"),
        ("match.command = 'make('\nkeep = ['a']\n", "`match.command` is not a valid regex ('make('"),
        ("match.prefix = 'make'\nkeep = ['ok', '[unclosed']\n", "`keep[1]` is not a valid regex ('[unclosed'"),
        ("match.prefix = 'make'\ndrop = ['(?P<x']\n", "`drop[0]` is not a valid regex"),
        ("match.prefix = 'make'\nkeep = 5\n", "`keep` must be a list of regex strings, not 5 (a number)"),
        ("match.prefix = 'make'\ndrop = ['a', 1]\n", "`drop` must be a list of regex strings"),
        ("match.prefix = 'make'\nhead = '5'\n", "`head` must be a whole number ≥ 0, not '5' (a string)"),
        ("match.prefix = 'make'\ntail = -1\n", "`tail` must be a whole number ≥ 0, not -1"),
        ("match.prefix = 'make'\nhead = 2.5\n", "`head` must be a whole number ≥ 0, not 2.5"),
        ("match.prefix = 'make'\nmax_lines = 0\n", "`max_lines` must be a whole number ≥ 1, not 0"),
        ("match.prefix = 'make'\nmax_lines = true\n", "`max_lines` must be a whole number ≥ 1, not True (a boolean)"),
        ("match.prefix = 'make'\ncollapse_repeats = 'yes'\n", "`collapse_repeats` must be true or false"),
        ("match.prefix = 'make'\n", "the filter has no rules"),
        ("match.prefix = 'make'\nkeep = [\n", "not valid TOML"),
        (b"match.prefix = '\xff'\nkeep = ['a']\n", "not UTF-8 text"),
    ],
)
def test_each_bad_input_is_one_problem_and_the_filter_is_skipped(dirs, text, expected):
    workspace, user = dirs
    bad = write(user_filters_dir(user), "bad.toml", text)
    write(user_filters_dir(user), "good.toml", GOOD)
    found = load_filter_files(workspace, user, workspace_trusted=False)
    assert [spec.name for spec in found.applied] == ["good"]
    [problem] = found.problems
    assert problem.file == str(bad)
    assert expected in problem.message and problem.message.endswith("this filter is skipped.")


def test_a_bad_file_name_is_reported(dirs):
    workspace, user = dirs
    write(user_filters_dir(user), "-weird name.toml", GOOD)
    found = load_filter_files(workspace, user, workspace_trusted=True)
    assert not found.applied and "is not a filter name" in found.problems[0].message


def test_a_valid_filter_is_read_in_full(dirs):
    workspace, user = dirs
    write(
        user_filters_dir(user),
        "gradle.toml",
        "match.prefix = './gradlew   build'\nkeep = 'FAILED'\ndrop = ['^> Task', 'UP-TO-DATE']\n"
        "head = 3\ntail = 20\ncollapse_repeats = true\nmax_lines = 200\n",
    )
    write(user_filters_dir(user), "notes.txt", "not a filter")
    [spec] = load_filter_files(workspace, user, workspace_trusted=False).applied
    assert (spec.name, spec.scope, spec.match_kind, spec.match_value) == ("gradle", USER, "prefix", "./gradlew build")
    assert [p.pattern for p in spec.keep] == ["FAILED"] and len(spec.drop) == 2
    assert (spec.head, spec.tail, spec.collapse_repeats, spec.max_lines) == (3, 20, True, 200)
    assert "starting with './gradlew build'" in spec.describe_match()


def test_workspace_filters_are_held_until_trusted(dirs):
    workspace, user = dirs
    write(workspace_filters_dir(workspace), "hide.toml", "match.command = '.'\ndrop = ['.']\n")
    write(user_filters_dir(user), "mine.toml", GOOD)
    held = load_filter_files(workspace, user, workspace_trusted=False)
    assert [s.name for s in held.applied] == ["mine"] and [s.name for s in held.held] == ["hide"]
    trusted = load_filter_files(workspace, user, workspace_trusted=True)
    assert [(s.name, s.scope) for s in trusted.applied] == [("mine", USER), ("hide", WORKSPACE)]
    assert not trusted.held


def test_the_users_filter_wins_a_name_clash(dirs):
    workspace, user = dirs
    write(workspace_filters_dir(workspace), "make.toml", "match.prefix = 'make'\nhead = 1\n")
    write(user_filters_dir(user), "make.toml", GOOD)
    found = load_filter_files(workspace, user, workspace_trusted=True)
    assert [s.scope for s in found.applied] == [USER]
    assert "also one of yours; yours applies" in found.problems[0].message


def test_trust_decides_for_workspace_filters(tmp_path):
    def state(name: str) -> T.WorkspaceTrust:
        return T.WorkspaceTrust(tmp_path, tmp_path / "config.toml", state=name)

    assert workspace_filters_trusted(state(T.TRUSTED)) and workspace_filters_trusted(state(T.ACCEPTED))
    for untrusted in (T.UNTRUSTED, T.NOTHING_TO_TRUST, T.NO_FILE):
        assert not workspace_filters_trusted(state(untrusted))
    assert not workspace_filters_trusted(None)
    assert workspace_filters_trusted(state(T.NO_FILE), T.ACCEPT_ANY)  # --trust for this run


def test_missing_folders_are_not_a_problem(dirs):
    workspace, user = dirs
    found = load_filter_files(workspace, user, workspace_trusted=True)
    assert found.applied == () and found.held == () and found.problems == ()
