"""pytest and unittest compressors on real runs of failing test suites."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.context.filters.conftest import filtered, run

PYTEST_SUITE = """
import pytest

@pytest.mark.parametrize("n", range(300))
def test_passes(n):
    assert n == n

def helper(value):
    return value * 2

def test_fails_with_needle():
    got = helper(21)
    assert got == 41, "expected the answer {needle}"

def test_raises():
    raise KeyError("missing-key")

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

def test_uses_broken(broken):
    pass
"""


def _pytest(tmp_path: Path, needle: str, *flags: str) -> str:
    (tmp_path / "test_suite.py").write_text(PYTEST_SUITE.replace("{needle}", needle))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *flags, "test_suite.py"],
        cwd=tmp_path,
    )


def test_pytest_verbose_keeps_failures_drops_passed(tmp_path: Path, needle: str) -> None:
    out = _pytest(tmp_path, needle, "-v")
    assert out.count("PASSED") >= 300
    budget = 5000
    result = filtered(out, budget, "cd x && python -m pytest -v 2>&1 | tail -n 2000")
    assert result.kind == "pytest"
    assert not re.search(r"::\S+ PASSED", result.text)
    assert "PASSED ×300" in result.text  # the drop is counted, not silent
    assert needle in result.text
    assert "test_fails_with_needle" in result.text and "test_raises" in result.text
    assert "fixture exploded" in result.text
    assert "short test summary info" in result.text
    assert "2 failed, 300 passed, 1 error" in result.text  # the final summary line
    assert "E       AssertionError" in result.text or "E   " in result.text
    assert "platform linux" not in result.text
    assert result.important_lines >= 5


def test_pytest_quiet_drops_dots(tmp_path: Path, needle: str) -> None:
    out = _pytest(tmp_path, needle)
    result = filtered(out, len(out) * 2 // 3, "pytest")
    assert result.kind == "pytest"
    assert needle in result.text
    assert "2 failed, 300 passed, 1 error" in result.text
    assert "....." not in result.text


UNITTEST_SUITE = """
import unittest

class Many(unittest.TestCase):
    pass

for i in range(200):
    setattr(Many, f"test_ok_{i:03d}", lambda self: self.assertTrue(True))

class Broken(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(1, 2, "{needle}")

    def test_error(self):
        {}["nope"]
"""


def test_unittest_verbose(tmp_path: Path, needle: str) -> None:
    (tmp_path / "test_mod.py").write_text(UNITTEST_SUITE.replace("{needle}", needle))
    out = run([sys.executable, "-m", "unittest", "-v", "test_mod"], cwd=tmp_path)
    assert out.count("... ok") == 200
    result = filtered(out, 2500, "python -m unittest -v test_mod")
    assert result.kind == "unittest"
    assert "... ok" not in result.text
    assert "FAIL: test_equal" in result.text and "ERROR: test_error" in result.text
    assert needle in result.text
    assert "KeyError: 'nope'" in result.text
    assert "Ran 202 tests" in result.text
    assert "FAILED (failures=1, errors=1)" in result.text
