"""Layering rules: Textual is imported only under myrm_tui/tui (the engine stays headless), and the
import contracts of pyproject.toml (`lint-imports`) hold and match the table in docs/architecture.md."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import myrm_tui

PACKAGE = Path(myrm_tui.__file__).parent
TUI = PACKAGE / "tui"


def _imports_textual(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
        else:
            continue
        if any(name == "textual" or name.startswith("textual.") for name in names):
            lines.append(node.lineno)
    return lines


def test_detector_sees_both_import_forms():
    tree = ast.parse(
        "import textual.app\nfrom textual.widgets import Static\nimport textualize\ndef f():\n    import textual\n"
    )
    assert _imports_textual(tree) == [1, 2, 5]


def test_textual_only_under_tui():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if TUI in path.parents:
            continue
        lines = _imports_textual(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        offenders += [f"{path.relative_to(PACKAGE.parent)}:{line}" for line in lines]
    assert not offenders, f"textual imported outside myrm_tui/tui: {offenders}"


def test_the_tui_package_is_where_textual_lives():
    # guards the walk above against a moved package (an empty walk would pass vacuously)
    tui_files = [p for p in TUI.rglob("*.py") if _imports_textual(ast.parse(p.read_text(encoding="utf-8")))]
    assert tui_files
    assert len(list(PACKAGE.rglob("*.py"))) > len(list(TUI.rglob("*.py")))


ROOT = PACKAGE.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], check=False, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _contracts(pyproject: Path) -> list[dict]:
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def test_import_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    # every contract ran: layers, no bench/tests, Textual only in tui, no sibling cycles
    kinds = {contract["type"] for contract in _contracts(ROOT / "pyproject.toml")}
    assert kinds == {"layers", "forbidden", "acyclic_siblings"}


def test_the_same_contracts_catch_a_layer_breach_and_a_cycle(tmp_path):
    # A two-module package under this repository's contract types: the lower layer importing the
    # upper one is both a layer breach and a sibling cycle, and lint-imports must say so.
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "upper.py").write_text("import toy.lower\n")
    (pkg / "lower.py").write_text("def f():\n    import toy.upper\n")  # lazy imports count too
    (tmp_path / "pyproject.toml").write_text(
        '[tool.importlinter]\nroot_package = "toy"\n'
        '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\n'
        'containers = ["toy"]\nexhaustive = true\nlayers = ["upper", "lower"]\n'
        '[[tool.importlinter.contracts]]\nname = "cycles"\ntype = "acyclic_siblings"\nancestors = ["toy"]\n'
    )
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert "toy.lower is not allowed to import toy.upper" in result.stdout
    assert "0 kept, 2 broken" in result.stdout


def _doc_layers() -> list[set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers (package `myrm_tui/`)", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            names = re.findall(r"`([^`]+)`", cells[1])
            layers.append({name.removesuffix(".py").removesuffix("/") for name in names})
    return layers


def test_the_architecture_table_lists_the_contract_layers_in_order():
    (contract,) = [c for c in _contracts(ROOT / "pyproject.toml") if c["type"] == "layers"]
    expected = [{name.strip() for name in re.split(r"[|:]", layer)} for layer in contract["layers"]]
    assert _doc_layers() == expected


def test_every_top_level_module_has_a_layer():
    # the contract is exhaustive; this names the module when one is added without a layer
    (contract,) = [c for c in _contracts(ROOT / "pyproject.toml") if c["type"] == "layers"]
    placed = {name.strip() for layer in contract["layers"] for name in re.split(r"[|:]", layer)}
    present = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    present |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert present == placed


def test_the_textual_contract_covers_every_module_but_tui():
    (contract,) = [c for c in _contracts(ROOT / "pyproject.toml") if c.get("forbidden_modules") == ["textual"]]
    present = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    present |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    covered = {name.removeprefix("myrm_tui.") for name in contract["source_modules"]}
    assert covered == present - {"tui"}
