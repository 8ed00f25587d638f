"""`myrm models` and `myrm doctor` answer in about a second: neither imports litellm (5-15 s)
nor loads the embedded model unless asked (`myrm doctor --deep`). Checked by what the process
imported and started, not by the wall clock, so a busy machine cannot turn it red."""

from __future__ import annotations

import subprocess
import sys

from tests.cli.cli_timeouts import CLI_TIMEOUT_S


def _run_and_list_modules(myrm, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = ['myrm', *{list(args)!r}]\n"
        "from myrm_tui.entry import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=myrm.workspace,
        env=myrm.env(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    modules = set(result.stderr.rsplit("MODULES ", 1)[-1].split())
    return result, modules


def test_models_lists_without_importing_litellm(myrm):
    result, modules = _run_and_list_modules(myrm, "models", "--search", "gpt4o", "--limit", "3")
    assert result.returncode == 0, result.stderr
    assert "openai/gpt-4o" in result.stdout
    assert "litellm" not in modules


def test_doctor_does_not_load_the_local_model_unless_deep(myrm):
    result, modules = _run_and_list_modules(myrm, "doctor")
    assert result.returncode in (0, 1), result.stderr
    assert "litellm" not in modules and "llama_cpp" not in modules
    assert "local model local/smollm2 answers" not in result.stdout
    assert "myrm doctor --deep" in result.stdout or "not installed" in result.stdout
