"""`python -m bench perf [pytest options]`: the wall-clock budgets of the test suite.

Why a separate run: those tests (`@pytest.mark.perf`: search latency, filtering 10 MB, artifact
indexing) measure this machine as much as the code, so the default `pytest` deselects them
(pyproject's addopts) and a red default run always means a bug. This command is the place to
check the budgets, on a quiet machine; it is `pytest -m perf` with the repository as the root.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "perf", *argv]
    return subprocess.call(command, cwd=REPO)
