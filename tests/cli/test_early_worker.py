"""Which command lines start the embedded model's worker at the entry point (early_worker.py):
only `myrm run` naming a `local/...` model once with --model; anything else is left to the run
command, which starts the worker from the settings as before."""

from __future__ import annotations

import pytest

from myrm_tui.cli_commands.run.early_worker import local_model_named, pool_of
from myrm_tui.llm.local.client import LocalWorkers


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--model", "local/smollm2", "hi"],
        ["run", "--model=local/smollm2", "hi"],
        ["run", "-m", "local/smollm2", "hi"],
        ["run", "--json", "hi", "-m", "local/smollm2"],
    ],
)
def test_run_naming_a_local_model_starts_it(argv: list[str]) -> None:
    assert local_model_named(argv) == "local/smollm2"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--model", "local/smollm2"],  # the chat (plain launch starts its own)
        ["acp", "--model", "local/smollm2"],
        ["run", "hi"],  # the model comes from the settings: the run command starts it
        ["run", "--model", "openai/gpt-4o", "hi"],
        ["run", "--model", "local/smollm2", "--model", "local/smollm2", "hi"],  # typer's rule decides
        ["run", "--", "--model", "local/smollm2"],  # the prompt, not a flag
        ["run", "--model", "local/smollm2", "--help"],
        ["run", "--model"],  # no value: typer's error
    ],
)
def test_anything_else_starts_nothing(argv: list[str]) -> None:
    assert local_model_named(argv) is None


def test_only_a_pool_is_taken_from_typers_context_object() -> None:
    with LocalWorkers() as pool:
        assert pool_of(pool) is pool
    assert pool_of(None) is None
    assert pool_of({"workers": pool}) is None
