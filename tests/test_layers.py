"""Layering rule: Textual is imported only under myrm_tui/tui (the engine stays headless)."""

from __future__ import annotations

import ast
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
