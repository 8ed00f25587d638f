"""Shared checks for the smart-filter tests: size, real lines only, needles, and a helper to
run real tools into text."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from myrm_tui.context.filters import FilterResult, filter_output, is_marker_line, strip_cut_tag

FIXTURES = Path(__file__).parent / "fixtures"


def real_lines(content: str) -> list[str]:
    """The lines a result may quote: the input's lines, plus the canonical re-indented lines
    when the input is JSON (the JSON skeleton is rendered in that layout)."""
    lines = content.splitlines()
    with contextlib.suppress(ValueError, RecursionError):
        lines += json.dumps(json.loads(content), indent=2, ensure_ascii=False).splitlines()
    return lines


def assert_real_excerpt(result: FilterResult, content: str, budget: int) -> None:
    assert len(result.text) <= budget, f"{len(result.text)} > {budget}"
    allowed = real_lines(content)
    allowed_set = set(allowed)
    real = 0
    for line in result.text.split("\n"):
        if is_marker_line(line):
            continue
        real += 1
        core = strip_cut_tag(line)
        if core == line and line in allowed_set:
            continue
        assert any(src.startswith(core) for src in allowed), f"not a real line or prefix: {line!r}"
    assert real >= 1, "the excerpt must contain at least one real line"
    # input lines that look like markers are shown but counted as markers above
    assert real <= result.shown_lines <= len(result.text.split("\n"))
    assert result.original_chars == len(content)
    assert result.original_lines == len(content.splitlines())


def filtered(content: str, budget: int, command: str | None = None, tool: str = "bash") -> FilterResult:
    args = {"command": command} if command is not None else {}
    result = filter_output(content, tool=tool, arguments=args, budget_chars=budget)
    assert result is not None, "content larger than the budget must be filtered"
    assert_real_excerpt(result, content, budget)
    return result


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 60) -> str:
    """Run a real tool and return stdout+stderr as the bash tool would show them."""
    full_env = {**os.environ, "LC_ALL": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    full_env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )  # failing builds are the point
    return proc.stdout


@pytest.fixture
def needle() -> str:
    return f"NEEDLE{secrets.token_hex(4)}"
