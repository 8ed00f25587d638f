"""docs/seed-audit.md must stay true: every cell that names code or a test names one that exists.

Why a test and not a one-off review: the audit is only worth reading while its `where` and `test`
cells point at real code. A rename or a deleted test would otherwise leave the table claiming a
mechanism the product no longer has. A TODO cell or an "in progress" status fails on purpose:
the table is finished, not skipped around.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
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
    good_where = "`myrm_tui/context/observations/intent.py:build_intent`"
    good_test = "`tests/test_seed_audit.py::test_the_checker_catches_what_it_claims_to`"
    assert row_problems(["m", "implemented", "`myrm_tui/context/observations/intent.py:nope`", good_test, ""])
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


# -- Rows as a checked contract: each row below names a mutation its test kills ---------------
#
# Why a mutation and not only a reference: a test that exists but still passes when the
# mechanism is gone claims more than it checks (issue 25 found five). Each entry is one small
# edit to a copy of the package (the shared tree is never touched) and the row's test, run alone
# against that copy, must fail. An anchor that no longer matches fails too: the row then needs
# its mutation rewritten, not dropped.


@dataclass(frozen=True)
class RowMutation:
    mechanism: str  # the row's mechanism cell, from its start
    module: str  # path under the repository root
    anchor: str  # the exact text the mutation replaces (once)
    mutant: str
    test: str  # tests/…::test_name[param], one test


ROW_MUTATIONS = (
    RowMutation(
        "Back-fill after a switch to a thinking model",
        "myrm_tui/context/stages/thinking_cleanup.py",
        'backfill = family == REASONING_TOOLS and bool(stripped.get("tool_calls"))',
        "backfill = False",
        "tests/agent/test_reasoning_backfill_live.py::"
        "test_after_a_switch_to_a_thinking_model_earlier_tool_turns_carry_reasoning_content[deepseek-reasoner]",
    ),
    RowMutation(
        "Compression intent from the current query",
        "myrm_tui/context/observations/intent.py",
        "    unique = list(dict.fromkeys(p for p in paths if len(p) >= 3))[:MAX_FOCUS]\n"
        "    query = compaction_text(rows[last_user_index].message)",
        '    unique: list[str] = []\n    query = ""',
        "tests/agent/test_compaction_intent_live.py::"
        "test_a_full_event_spares_the_output_of_the_file_the_user_just_asked_about",
    ),
    RowMutation(
        "Post-compaction-reread step",
        "myrm_tui/context/stages/post_compaction_reread.py",
        "    if reader is None:\n        return None\n    parts",
        "    if True:\n        return None\n    parts",
        "tests/agent/test_post_compaction_reread_live.py::"
        "test_compact_then_the_next_request_carries_the_modified_file_as_it_is_now",
    ),
    RowMutation(
        "Leaf summary of the oldest out-of-tail chunk",
        "myrm_tui/context/summary/chunking.py",
        '    is skipped: it gets the extractive body."""\n',
        '    is skipped: it gets the extractive body."""\n    return []\n',
        "tests/agent/test_compact_summarizes.py::"
        "test_compact_on_a_40_turn_chat_writes_model_summaries_with_the_focus_and_frees_tokens",
    ),
    RowMutation(
        "Summarizer defaults to the lite model",
        "myrm_tui/agent/setup/model_calls.py",
        "    return LiteChoice(small, ",
        "    return LiteChoice(None, ",
        "tests/agent/test_lite_model_auto.py::"
        "test_compact_with_a_large_anthropic_model_and_its_key_summarizes_with_haiku",
    ),
    RowMutation(
        "Four priority tiers",
        "myrm_tui/context/stages/compress.py",
        "    def mask_priority(self, i: int, last_user: int) -> int:\n",
        "    def mask_priority(self, i: int, last_user: int) -> int:\n        return 2\n",
        "tests/agent/test_mask_priority_live.py::"
        "test_a_full_event_masks_the_file_reads_and_keeps_the_older_command_outputs",
    ),
    RowMutation(
        "Fork with summary (Frontend)",
        "myrm_tui/agent/fork_cover.py",
        "    return [\n        n\n        for n in store.summaries(session_id)",
        "    return [] and [\n        n\n        for n in store.summaries(session_id)",
        "tests/agent/test_fork_reuses_summaries.py::"
        "test_a_fork_of_a_compacted_session_starts_from_the_model_summary_with_no_new_call",
    ),
    RowMutation(
        "Reread the 5 most recently modified files",
        "myrm_tui/context/stages/post_compaction_reread.py",
        "    paths += changed_files(message)\n",
        "",
        "tests/agent/test_reread_after_bash.py::test_a_file_bash_changed_is_reread_after_compact",
    ),
    RowMutation(
        "Frozen tool schema across MCP syncs",
        "myrm_tui/mcp/frozen_order.py",
        "    by_name = {tool.name: tool for tool in live}\n",
        "    return list(live)\n",
        "tests/mcp/test_mcp_frozen_tools.py::"
        "test_a_sync_that_adds_and_removes_keeps_what_was_offered_as_a_byte_identical_prefix",
    ),
    RowMutation(
        "Tool protection whitelist",
        "myrm_tui/context/observations/file_protection.py",
        "        if total + cost <= limit:\n",
        "        if False:\n",
        "tests/agent/test_file_protection_live.py::"
        "test_a_current_read_stays_whole_and_a_read_of_an_edited_file_is_masked",
    ),
    RowMutation(
        "Eviction minimum age",
        "myrm_tui/context/stages/compress.py",
        "                young |= {k for k, age in ages.items() if age < inp.eviction_min_age}\n",
        "                young |= set()\n",
        "tests/agent/test_age_windows_live.py::test_eviction_min_age_keeps_the_outputs_of_the_last_turns_whole",
    ),
    RowMutation(
        "Thinking keep turns",
        "myrm_tui/context/history.py",
        "        return self.user_rows[-1 - self.thinking_keep]\n",
        "        return self.user_rows[-1]\n",
        "tests/agent/test_age_windows_live.py::test_thinking_keep_turns_sends_the_reasoning_of_the_last_turns_only[2]",
    ),
    RowMutation(
        "Capability-class cap on the window",
        "myrm_tui/llm/models/capability_class.py",
        "    if cap is None or model.context_window <= cap:\n",
        "    if True:\n",
        "tests/agent/test_window_cap_live.py::test_a_number_caps_the_budget_of_every_request",
    ),
)
# A mutated run gets this long: the slowest named test takes ~30 s on a loaded 2-core box.
MUTANT_TIMEOUT_S = 240
# The mutant runs cost 20-70 s each (a fresh interpreter, litellm's import, the live test), so
# they run on demand and in the mutation job: `MYRM_MUTATION_ROWS=1 pytest tests/test_seed_audit.py`.
RUN_MUTANTS = os.environ.get("MYRM_MUTATION_ROWS") == "1"


def _row(mechanism: str) -> list[str]:
    found = [row for row in all_rows() if row[0].startswith(mechanism)]
    assert len(found) == 1, f"{mechanism!r} matches {len(found)} rows"
    return found[0]


@pytest.mark.parametrize("mutation", ROW_MUTATIONS, ids=lambda m: m.mechanism[:40])
def test_each_mutation_row_is_cited_by_its_row_and_still_applies(mutation: RowMutation):
    """The cheap half of the contract (every run): the row is implemented, cites the killing
    test, and the mutation's anchor is still in the module exactly once."""
    row = _row(mutation.mechanism)
    assert row[1] == "implemented"
    assert f"`{mutation.test.split('[')[0]}`" in row[3], "the row cites the test that kills its mutation"
    assert (ROOT / mutation.module).read_text(encoding="utf-8").count(mutation.anchor) == 1


@pytest.mark.slow
@pytest.mark.skipif(not RUN_MUTANTS, reason="mutant runs are on demand: MYRM_MUTATION_ROWS=1")
@pytest.mark.parametrize("mutation", ROW_MUTATIONS, ids=lambda m: m.mechanism[:40])
def test_each_rows_test_fails_when_its_mutation_is_applied(mutation: RowMutation, tmp_path: Path):
    copy = tmp_path / "mutant"
    shutil.copytree(ROOT / "myrm_tui", copy / "myrm_tui", ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / mutation.module
    text = module.read_text(encoding="utf-8")
    assert text.count(mutation.anchor) == 1, "the mutation no longer applies: rewrite it for the current code"
    module.write_text(text.replace(mutation.anchor, mutation.mutant), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        # append: the tests are a package under ROOT, and pytest's default (prepend) would put ROOT
        # ahead of PYTHONPATH, so the test would import the unmutated package.
        # `-n 0 -m ""`: one process, and no tier filter (a named test may be in the slow tier; a
        # deselected test would read as "no test failed", not as a kill).
        [sys.executable, "-m", "pytest", str(ROOT / mutation.test), "-x", "-q", "-p", "no:cacheprovider"]
        + ["--import-mode=append", "-n", "0", "-m", ""],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=MUTANT_TIMEOUT_S,
        check=False,
    )
    summary = run.stdout[-2000:]
    assert "1 failed" in summary and run.returncode == 1, (
        f"the mutant survived or did not run:\n{summary}\n{run.stderr[-2000:]}"
    )
