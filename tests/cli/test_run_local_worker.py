"""`myrm run` owns the embedded model's worker: it starts it before the store opens (the weights
load while the session is chosen) and stops it when the run ends, in this process.

Before: the worker sat in a module-level registry of the process; `myrm run` started it on the
first model call, after the store, and it lived on after the run returned (until the process's
exit hook), so a second owner in the same process (tests, an ACP server) shared or inherited it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Myrm
from tests.llm.worker_processes import worker_pids

pytestmark = pytest.mark.llama


@pytest.mark.slow
def test_myrm_run_starts_the_worker_before_the_store_and_stops_it_when_it_ends(
    myrm: Myrm, monkeypatch: pytest.MonkeyPatch
) -> None:
    from myrm_tui.cli_commands import common
    from myrm_tui.cli_commands.run import command as run

    assert not worker_pids()
    at_store_open: list[set[int]] = []
    open_store = common.open_store  # the function run.py imported, before the patch below

    def watched_open_store(workspace: Path):
        at_store_open.append(worker_pids())
        return open_store(workspace)

    monkeypatch.setattr(run, "open_store", watched_open_store)
    result = myrm("run", "--model", "local/smollm2", "Name one colour of the rainbow.")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the model answered"
    assert at_store_open and at_store_open[0], "the worker was running before the store opened"
    assert not worker_pids(), "the run's worker ended with the run, not at the process's exit"
