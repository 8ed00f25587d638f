#!/usr/bin/env bash
# Creates bench/.venv: myrm (editable) plus the peers it is benchmarked against.
# The peers never enter the project's own environment (hermes-agent installs top-level packages
# named agent, tools, utils, cli... and pins exact versions that conflict with aider-chat's).
#   bash bench/setup.sh && bench/.venv/bin/python -m bench all
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
PYTHON="${PYTHON:-python3}"
VENV="$HERE/.venv"

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "bench/setup.sh needs Python 3.11+ (set PYTHON=...)")'
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
"${PIP[@]}" install --upgrade pip
# myrm and its own dependencies, then the peers that resolve normally (langchain-core, litellm)
# and the few modules hermes's and aider's compaction code imports.
"${PIP[@]}" install -e "$ROOT" -r "$HERE/requirements.txt"
# hermes-agent and aider-chat cannot co-resolve (exact pins on openai, pydantic, requests, rich):
# install them without their dependency pins. `pip check` will list aider's unmet pins; that is
# expected and harmless for aider.history / agent.context_compressor.
"${PIP[@]}" install --no-deps -r "$HERE/requirements-nodeps.txt"
export LITELLM_LOCAL_MODEL_COST_MAP=True
"$VENV/bin/python" - <<'PY'
import myrm_tui  # noqa: F401  offline litellm/tiktoken environment first
import importlib
for module, what in (("myrm_tui.replay", "myrm"), ("agent.context_compressor", "hermes-agent"),
                     ("aider.history", "aider-chat"), ("langchain_core.messages", "langchain-core"),
                     ("litellm.utils", "litellm")):
    try:
        importlib.import_module(module)
        print(f"ok   {what:<15} ({module})")
    except Exception as exc:  # noqa: BLE001
        print(f"FAIL {what:<15} ({module}): {type(exc).__name__}: {exc}")
PY
echo "bench venv ready: $VENV/bin/python -m bench all"
