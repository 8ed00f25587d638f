"""docs/seed-audit.md must stay true: every cell that names code or a test names one that exists.

Why a test and not a one-off review: the audit is only worth reading while its `where` and `test`
cells point at real code. A rename or a deleted test would otherwise leave the table claiming a
mechanism the product no longer has. A TODO cell or an "in progress" status fails on purpose:
the table is finished, not skipped around.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / "docs" / "seed-audit.md"
# The statuses a finished row may have; "in progress" is not one of them.
STATUSES = ("implemented", "partial", "not applicable")
HEADER = ["mechanism", "status", "where", "test", "note"]
NONE_CELL = "—"
# Each seed table is a section of its own; fewer rows than this means rows were lost.
MIN_ROWS_PER_TABLE = 40
_REF = re.compile(r"`([^`]+)`")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def audit_tables() -> dict[str, list[list[str]]]:
    """Rows (cells) of each table, keyed by the `## ` heading above it."""
    tables: dict[str, list[list[str]]] = {}
    heading = ""
    lines = AUDIT.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## "):
            heading = line[3:].strip()
        if not line.startswith("|") or i + 1 >= len(lines):
            continue
        if _cells(line) == HEADER and set(lines[i + 1].replace("|", "").strip()) <= set("-: "):
            rows: list[list[str]] = []
            for body in lines[i + 2 :]:
                if not body.startswith("|"):
                    break
                rows.append(_cells(body))
            tables[heading] = rows
    return tables


def all_rows() -> list[list[str]]:
    return [row for rows in audit_tables().values() for row in rows]


@cache
def _definitions(path: Path) -> frozenset[str]:
    """Every top-level name and `Class.member` defined in a module (functions, classes, and
    module or class level assignments, which is where constants live)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()

    def targets(node: ast.stmt) -> list[str]:
        if isinstance(node, ast.Assign):
            return [t.id for t in node.targets if isinstance(t, ast.Name)]
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            return [node.target.id]
        return []

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        names.update(targets(node))
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(f"{node.name}.{member.name}")
                names.update(f"{node.name}.{name}" for name in targets(member))
    return frozenset(names)


def where_problem(ref: str) -> str | None:
    path_text, sep, name = ref.partition(":")
    if not sep or not name:
        return f"{ref!r} is not module.py:name"
    if not path_text.startswith("myrm_tui/") or not path_text.endswith(".py"):
        return f"{ref!r} is not a product module (myrm_tui/…py)"
    path = ROOT / path_text
    if not path.is_file():
        return f"{path_text} does not exist"
    if name not in _definitions(path):
        return f"{name} is not defined in {path_text}"
    return None


def ref_problem_of_test(ref: str) -> str | None:
    path_text, *names = ref.split("::")
    if not path_text.startswith("tests/") or not path_text.endswith(".py") or not names:
        return f"{ref!r} is not tests/…py::test_name"
    path = ROOT / path_text
    if not path.is_file():
        return f"{path_text} does not exist"
    qualified = ".".join(names)
    if qualified not in _definitions(path) or not names[-1].startswith("test"):
        return f"{qualified} is not a test in {path_text}"
    return None


def row_problems(row: list[str]) -> list[str]:
    """What is wrong with one table row (an empty list: nothing)."""
    if len(row) != len(HEADER):
        return [f"{len(row)} cells, expected {len(HEADER)}"]
    mechanism, status, where, tests, note = row
    problems: list[str] = []
    if status not in STATUSES:
        problems.append(f"status {status!r} is not one of {STATUSES}")
    for column, cell in (("where", where), ("test", tests)):
        if "TODO" in cell:
            problems.append(f"{column} is TODO")
    if status == "not applicable":
        if where != NONE_CELL or tests != NONE_CELL:
            problems.append(f"a not-applicable row has {NONE_CELL} in where and test")
        if not note:
            problems.append("a not-applicable row says why in its note")
        return problems
    if status == "partial" and not note:
        problems.append("a partial row says what is missing in its note")
    where_refs, test_refs = _REF.findall(where), _REF.findall(tests)
    if status in STATUSES and not where_refs:
        problems.append("no module:function in where")
    if status in STATUSES and not test_refs:
        problems.append("no tests/…::test in test")
    problems += [p for ref in where_refs if (p := where_problem(ref))]
    problems += [p for ref in test_refs if (p := ref_problem_of_test(ref))]
    return problems


def test_the_audit_has_one_full_table_per_seed():
    tables = audit_tables()
    assert len(tables) == 2, f"expected one table per seed, found {list(tables)}"
    for heading, rows in tables.items():
        assert len(rows) >= MIN_ROWS_PER_TABLE, f"{heading}: {len(rows)} rows"
    mechanisms = [row[0] for row in all_rows()]
    duplicates = {m for m in mechanisms if mechanisms.count(m) > 1}
    assert not duplicates, f"rows listed twice: {sorted(duplicates)}"


@pytest.mark.parametrize("row", all_rows(), ids=lambda row: row[0][:60])
def test_every_row_names_code_and_tests_that_exist(row):
    assert row_problems(row) == []


def test_the_audit_stands_on_its_own_and_is_linked():
    text = AUDIT.read_text(encoding="utf-8")
    assert "/work/" not in text and "seeds/" not in text, "the audit cites files outside the repository"
    linked = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8") + (ROOT / "README.md").read_text(
        encoding="utf-8"
    )
    assert "seed-audit.md" in linked


def test_the_checker_catches_what_it_claims_to():
    """The checks themselves can fail: a bad reference, a TODO, an unknown status."""
    good_where = "`myrm_tui/context/intent.py:build_intent`"
    good_test = "`tests/test_seed_audit.py::test_the_checker_catches_what_it_claims_to`"
    assert row_problems(["m", "implemented", "`myrm_tui/context/intent.py:nope`", good_test, ""])
    assert row_problems(["m", "implemented", good_where, "`tests/test_seed_audit.py::nope`", ""])
    assert row_problems(["m", "in progress", "TODO", "TODO", ""])
    assert row_problems(["m", "partial", good_where, good_test, ""])
    assert row_problems(["m", "not applicable", good_where, NONE_CELL, "gui"])
    assert not row_problems(["m", "not applicable", NONE_CELL, NONE_CELL, "gui"])
    assert not row_problems(
        [
            "m",
            "implemented",
            good_where + ", `myrm_tui/context/engine.py:ContextEngine.assemble`",
            good_test,
            "",
        ]
    )
