"""`myrm run` owns the embedded model's worker: it starts it before the store opens (the weights
load while the session is chosen) and stops it when the run ends, in this process.

Before: the worker sat in a module-level registry of the process; `myrm run` started it on the
first model call, after the store, and it lived on after the run returned (until the process's
exit hook), so a second owner in the same process (tests, an ACP server) shared or inherited it.
"""

from __future__ import annotations

import signal
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


def _watch_spawns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What happened, in order: each worker spawned (with its thread count) and the typer CLI's
    entry reached (`cli.main`, which the console script calls only after `early_worker`)."""
    from myrm_tui import cli
    from myrm_tui.llm.local import client

    events: list[str] = []
    spawn, cli_main = client.LocalWorker.__init__, cli.main

    def watched_spawn(self, key, model, on_exit):
        events.append(f"spawn threads={key.threads}")
        spawn(self, key, model, on_exit)

    def watched_cli_main(early=None):
        events.append("cli")
        cli_main(early)

    monkeypatch.setattr(client.LocalWorker, "__init__", watched_spawn)
    monkeypatch.setattr(cli, "main", watched_cli_main)
    return events


@pytest.mark.slow
def test_myrm_run_starts_the_named_local_model_before_the_cli_loads_and_uses_that_worker(
    myrm: Myrm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's 0.5-0.7 s of loading starts at the entry point, not 0.3-0.4 s later once typer,
    the settings and the run command are imported (issue 27), and the run asks the same pool:
    one worker, not a second one for the run while the first idles."""
    events = _watch_spawns(monkeypatch)
    result = myrm("run", "--model", "local/smollm2", "Name one colour of the rainbow.")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the model answered"
    assert events == ["spawn threads=0", "cli"], events
    assert not worker_pids(), "the early worker ended with the run"


@pytest.mark.slow
def test_a_local_threads_setting_replaces_the_early_worker(myrm: Myrm, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point cannot read settings; the run command can, and a worker started with
    another thread count is replaced by the one the settings name (and the first one stops)."""
    (myrm.config_dir / "config.toml").write_text("local_threads = 1\n", encoding="utf-8")
    events = _watch_spawns(monkeypatch)
    result = myrm("run", "--model", "local/smollm2", "Name one colour of the rainbow.")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the model answered"
    assert events == ["spawn threads=0", "cli", "spawn threads=1"], events
    assert not worker_pids(), "both workers ended with the run"


def test_a_usage_error_stops_the_early_worker_without_waiting_for_its_weights(
    myrm: Myrm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that stops before its turn (here: an empty prompt) kills the worker the entry point
    started while it was still loading, rather than waiting for the load to end (a loading
    worker reads its stdin, and so sees the close, only once the weights are in)."""
    from myrm_tui.llm.local import client

    started: list[client.LocalWorker] = []
    spawn = client.LocalWorker.__init__

    def watched_spawn(self, key, model, on_exit):
        spawn(self, key, model, on_exit)
        started.append(self)

    monkeypatch.setattr(client.LocalWorker, "__init__", watched_spawn)
    result = myrm("run", "--model", "local/smollm2", "  ")
    assert result.returncode == 2, result.stderr
    assert "prompt is empty" in result.stderr
    assert len(started) == 1
    assert started[0].process.returncode == -signal.SIGKILL, "killed while loading, not waited for"
    assert not worker_pids()
