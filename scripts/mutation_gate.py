"""Mutation gate: mutmut over the engine and agent modules that carry the seed mechanisms.

Why: a test that still passes when the mechanism it names is gone claims more than it checks
(issue 25 found five such tests). mutmut makes many small edits ("mutants") to a module and runs
the module's tests against each; a mutant the tests do not notice ("survived") marks code no test
pins down. The score is killed / total over the modules run; the gate fails below FLOOR.

    python scripts/mutation_gate.py                  # functions changed since HEAD~1, in scoped modules
    python scripts/mutation_gate.py --since main     # ... changed since another ref
    python scripts/mutation_gate.py --whole-files    # ... every function of each changed scoped module
    python scripts/mutation_gate.py --module myrm_tui/context/observations/intent.py
    python scripts/mutation_gate.py --all            # the whole scope (on demand, long)

By default only the functions a change touched are mutated (the diff's lines mapped onto the
functions and methods that contain them): that keeps a typical change to a few minutes, where a
whole module of this size takes 5 to 30. mutmut runs in a scratch copy of the repository (its
`mutants/` folder and its configuration never touch the working tree), with only the module's
targeted tests (SCOPE), not the whole suite (half an hour per mutant set). Figures and the
floor's history: docs/testing.md.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The modules carrying the seed mechanisms (docs/seed-audit.md) and, for each, the tests that
# exercise it through the path the user runs plus its unit tests: mutmut runs only these (a
# module's mutants are checked against the tests that cover it, found by mutmut's own stats run
# over this selection). Add a module here with the tests that own it.
SCOPE: dict[str, tuple[str, ...]] = {
    "myrm_tui/context/observations/intent.py": (
        "tests/context/test_intent_focus.py",
        "tests/agent/test_compaction_intent_live.py",
    ),
    "myrm_tui/context/stages/thinking_cleanup.py": (
        "tests/context/test_prompt_hygiene.py",
        "tests/llm/test_reasoning.py",
        "tests/agent/test_reasoning_backfill_live.py",
    ),
    "myrm_tui/context/stages/post_compaction_reread.py": (
        "tests/agent/test_post_compaction_reread_live.py",
        "tests/agent/test_file_integrity.py",
    ),
    "myrm_tui/context/summary/chunking.py": (
        "tests/context/summary/test_summary_chunking.py",
        "tests/agent/test_compact_summarizes.py",
    ),
    "myrm_tui/context/summary/routing.py": (
        "tests/context/summary/test_summary_client.py",
        "tests/agent/test_agent_context.py",
        "tests/agent/test_lite_model_auto.py",
        "tests/agent/test_summary_routing_live.py",
    ),
    "myrm_tui/agent/setup/model_calls.py": (
        "tests/agent/test_lite_model_auto.py",
        "tests/faults/test_summarizer_endpoint.py",
        "tests/cli/test_lite_model_doctor.py",
    ),
    "myrm_tui/context/stages/compress.py": (
        "tests/agent/test_mask_priority_live.py",
        "tests/context/test_relevance.py",
        "tests/context/test_model_folds.py",
        "tests/context/test_light_filter_tier.py",
        "tests/context/test_planner_row_memos.py",
        "tests/context/test_planner_light_steps.py",
    ),
    # Every threshold of the ladder reads these counts (the 90 % safety net included).
    "myrm_tui/context/window/tokens.py": (
        "tests/context/test_line_token_counts.py",
        "tests/context/test_engine_speed_caches.py",
    ),
}

# The score floor (killed / total, percent) over the mutants a run covers. Measured whole-module
# scores (docs/testing.md, "Mutation testing with mutmut: the gate"): thinking_cleanup 72 %,
# post_compaction_reread 67 %, routing 84 %, intent 54 %; the floor sits just under the lowest,
# so a change that adds untested code to a module fails while run-to-run noise (a timeout counted
# one way or the other) does not. Ratchet it up as survivors are killed; never down to let a
# change through.
FLOOR = 50.0

# mutmut's exit codes that mean the tests noticed the mutant: a failing test, pytest's internal
# error, a CPU-time kill (an infinite loop is noticed too) and mutmut's timeout verdict.
DETECTED = frozenset({1, 3, 24, -24, 152, 255, 36})

# Files the targeted tests read besides the package and the tests (docs the audit tests parse,
# themes the TUI loads); copied into the scratch tree and into mutmut's `mutants/` copy.
ALSO_COPY = ("docs", "themes", "scripts", "README.md", "CONTRIBUTING.md")


@dataclass(frozen=True)
class ModuleScore:
    module: str
    killed: int
    total: int
    survivors: tuple[str, ...]

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.total if self.total else 100.0


class GitRefError(RuntimeError):
    pass


def _git(*args: str) -> str:
    run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise GitRefError(run.stderr.strip() or f"git {' '.join(args)} failed")
    return run.stdout


def changed_modules(since: str) -> list[str]:
    """Scoped modules changed between `since` and the working tree (committed or not)."""
    out = _git("diff", "--name-only", since, "--", "myrm_tui").split()
    return [m for m in SCOPE if m in out]


HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def changed_functions(module: str, since: str) -> list[str] | None:
    """mutmut's names (`x_func`, `xǁClassǁmethod`) of the functions in `module` whose lines the
    diff since `since` touches; None when the module is new (every function is new)."""
    if not _git("ls-tree", "--name-only", since, "--", module).strip():
        return None
    lines: set[int] = set()
    for match in HUNK.finditer(_git("diff", "-U0", since, "--", module)):
        start, count = int(match.group(1)), int(match.group(2) or 1)
        # A pure deletion (count 0) touches the line it was removed before.
        lines.update(range(start, start + max(count, 1)))
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    names: list[str] = []

    def touched(node: ast.AST) -> bool:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]
        return any(first <= n <= (node.end_lineno or first) for n in lines)  # type: ignore[attr-defined]

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and touched(node):
            names.append(f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and touched(item):
                    names.append(f"x\u01c1{node.name}\u01c1{item.name}")
    return names


def mutant_patterns(module: str, functions: list[str]) -> list[str]:
    """mutmut `run` arguments selecting the mutants of `functions` (and the tests that cover
    them: mutmut matches the same pattern against its function-to-tests map)."""
    dotted = module.removesuffix(".py").replace("/", ".")
    return [f"{dotted}.{name}*" for name in functions]


def _toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _scratch_tree(work: Path, modules: list[str]) -> None:
    """A copy of the repository's tracked and new files, with a [tool.mutmut] section naming
    exactly these modules and their tests (mutmut reads its configuration from the cwd)."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "myrm_tui", "tests", *ALSO_COPY, "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in files:
        src = ROOT / name
        if src.is_file():
            dest = work / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    tests = sorted({t for m in modules for t in SCOPE[m] if (ROOT / t).exists()})
    config = (
        "\n\n[tool.mutmut]\n"
        'source_paths = ["myrm_tui"]\n'
        f"only_mutate = {_toml_list(modules)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        # One process (mutmut runs its own workers) and no tier filter: a slow-tier test counts too.
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-n", "0", "-m", ""]\n'
        f"also_copy = {_toml_list(ALSO_COPY)}\n"
    )
    pyproject = work / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + config, encoding="utf-8")


def _scores(work: Path, modules: list[str], patterns: list[str]) -> list[ModuleScore]:
    scores = []
    for module in modules:
        meta = work / "mutants" / (module + ".meta")
        codes: dict[str, int | None] = {}
        if meta.exists():
            codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        if patterns:  # a function-scoped run leaves the other mutants of the module unchecked
            codes = {k: v for k, v in codes.items() if any(fnmatch.fnmatchcase(k, p) for p in patterns)}
        codes = {k: v for k, v in codes.items() if v is not None}  # None: never run (a failed clean run)
        killed = sum(1 for code in codes.values() if code in DETECTED)
        survivors = tuple(sorted(name for name, code in codes.items() if code not in DETECTED))
        scores.append(ModuleScore(module, killed, len(codes), survivors))
    return scores


def run_gate(
    modules: list[str], patterns: list[str], *, workdir: Path | None, max_children: int | None
) -> list[ModuleScore]:
    """mutmut over `modules`; with `patterns`, only the mutants (and tests) they select."""
    work = workdir or Path(tempfile.mkdtemp(prefix="myrm-mutation-"))
    if (work / "mutants").exists():
        shutil.rmtree(work / "mutants")
    _scratch_tree(work, modules)
    command = [sys.executable, "-m", "mutmut", "run"]
    if max_children:
        command += ["--max-children", str(max_children)]
    command += patterns
    started = time.monotonic()
    # mutmut's exit status is not its verdict (it exits 0 with survivors); the .meta files are.
    subprocess.run(command, cwd=work, check=False)
    print(f"mutmut ran {len(modules)} module(s) in {time.monotonic() - started:.0f} s (scratch tree: {work})")
    return _scores(work, modules, patterns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--since", default="HEAD~1", help="git ref: run the scoped modules changed since it")
    group.add_argument("--all", action="store_true", help="run the whole scope")
    group.add_argument("--module", action="append", default=[], help="a scoped module (repeatable)")
    parser.add_argument("--whole-files", action="store_true", help="with --since: every function of a changed module")
    parser.add_argument("--workdir", type=Path, help="scratch tree to reuse (default: a new temp folder)")
    parser.add_argument("--max-children", type=int, help="parallel mutant workers (default: CPU count)")
    args = parser.parse_args(argv)

    patterns: list[str] = []
    if args.all:
        modules = list(SCOPE)
    elif args.module:
        unknown = [m for m in args.module if m not in SCOPE]
        if unknown:
            parser.error(f"not in the mutation scope (scripts/mutation_gate.py SCOPE): {', '.join(unknown)}")
        modules = list(args.module)
    else:
        try:
            modules = changed_modules(args.since)
            functions = {m: changed_functions(m, args.since) for m in modules}
        except GitRefError as error:
            print(f"mutation gate: cannot diff against {args.since!r} ({error}); pass --since REF", file=sys.stderr)
            return 2
        if not args.whole_files and all(f is not None for f in functions.values()):
            modules = [m for m in modules if functions[m]]
            patterns = [p for m in modules for p in mutant_patterns(m, functions[m] or [])]
    if not modules:
        print(f"mutation gate: no function of a scoped module changed since {args.since}; nothing to run")
        return 0
    for pattern in patterns:
        print(f"mutation gate: {pattern}")

    scores = run_gate(modules, patterns, workdir=args.workdir, max_children=args.max_children)
    killed = sum(s.killed for s in scores)
    total = sum(s.total for s in scores)
    for s in scores:
        print(f"  {s.module}: {s.killed}/{s.total} killed ({s.percent:.0f}%)")
        for name in s.survivors:
            print(f"    survived: {name}")
    if total == 0:
        print(
            "mutation gate: no mutant was run. mutmut first runs the targeted tests without mutants; "
            "when one of them fails (its output is above) it stops: fix that test first.",
            file=sys.stderr,
        )
        return 2
    percent = 100.0 * killed / total
    verdict = "ok" if percent >= FLOOR else "FAILED"
    print(f"mutation gate {verdict}: {killed}/{total} killed = {percent:.1f}% (floor {FLOOR:.0f}%)")
    return 0 if percent >= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
