"""`myrm run … | head -1`: the reader leaves early and myrm stops as Unix tools do, quietly
(before: "Broken pipe … This is a bug in myrm" on stderr and exit 1)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli.cli_timeouts import CLI_TIMEOUT_S

# Enough output that the pipe is closed long before the answer ends.
LINES = 400


@pytest.mark.slow
def test_a_reader_that_leaves_early_ends_the_run_quietly(myrm, script, workspace):
    text = "".join(f"line {n}\n" for n in range(LINES))
    model = script({"text": text, "chunk_size": 8, "delay_ms": 2})
    with subprocess.Popen(
        [sys.executable, "-m", "myrm_tui", "run", "--model", model, "count"],
        cwd=workspace,
        env=myrm.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == "line 0\n"
        proc.stdout.close()  # what `head -1` does after its line
        stderr = proc.stderr.read()
        code = proc.wait(timeout=CLI_TIMEOUT_S)
    assert code in (0, 141), stderr
    assert "bug in myrm" not in stderr and "Broken pipe" not in stderr and "Traceback" not in stderr
    resumed = myrm("sessions", "list", "--json")
    assert resumed.returncode == 0 and model in resumed.stdout, "the session is kept and listed"
