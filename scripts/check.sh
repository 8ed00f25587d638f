#!/usr/bin/env bash
# The guard rails CI runs before the tests, in one command (run it before you push):
# lint, format, types, import contracts. Each step names itself; the first failure stops it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== ruff check"; ruff check myrm_tui tests bench scripts
echo "== ruff format --check"; ruff format --check myrm_tui tests bench scripts
# One run over [tool.mypy] packages (myrm_tui strict, tests with check_untyped_defs): one cache
# and one import graph, faster than a second `mypy tests`.
echo "== mypy"; mypy
echo "== import contracts"; lint-imports
echo "guard rails: all passed"
