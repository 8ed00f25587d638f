"""The mutation gate (scripts/mutation_gate.py) selects what it claims: the scoped modules and
their tests exist, and a diff is mapped onto mutmut's names of exactly the functions it touches
(a wrong name would select no mutant and pass with nothing checked)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from mutmut.mutation.trampoline_templates import mangle_function_name

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mutation_gate", ROOT / "scripts" / "mutation_gate.py")
assert spec is not None and spec.loader is not None
gate = importlib.util.module_from_spec(spec)
sys.modules["mutation_gate"] = gate  # its dataclass looks its module up while being defined
spec.loader.exec_module(gate)

BEFORE = """def untouched(x):
    return x + 1


class Planner:
    def keep(self):
        return 1

    def plan(self, n):
        return n * 2


def also_untouched():
    return 0
"""


def test_every_scoped_module_and_test_exists():
    for module, tests in gate.SCOPE.items():
        assert (ROOT / module).is_file(), module
        assert tests, f"{module} has no tests"
        for test in tests:
            assert (ROOT / test).is_file(), f"{module}: {test}"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_a_diff_selects_the_mutants_of_the_functions_it_touches(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    module = repo / "pkg" / "mod.py"
    module.write_text(BEFORE)
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base", "--allow-empty")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "mod")
    module.write_text(BEFORE.replace("return n * 2", "return n * 3"))
    monkeypatch.setattr(gate, "ROOT", repo)

    names = gate.changed_functions("pkg/mod.py", "HEAD")

    assert names == [mangle_function_name(name="plan", class_name="Planner")]
    assert gate.mutant_patterns("pkg/mod.py", names) == ["pkg.mod.x\u01c1Planner\u01c1plan*"]
    assert gate.changed_functions("pkg/mod.py", "HEAD~1") is None, "a new module: every function"


def test_an_unknown_ref_is_a_clear_error_not_an_empty_run(monkeypatch, capsys):
    code = gate.main(["--since", "no-such-ref-xyz"])

    assert code == 2
    assert "cannot diff against 'no-such-ref-xyz'" in capsys.readouterr().err
