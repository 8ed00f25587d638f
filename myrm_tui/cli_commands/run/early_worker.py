"""`myrm run --model local/NAME`: the embedded model's worker started before the CLI loads.

Why: the worker's weights take 0.5-0.7 s to be ready on two cores (its Python start, llama.cpp's
import, the load), and until now it was started only once typer, the settings and the run
command had been imported, 0.3-0.4 s into the process. The first token waited for the worker,
not for the run's own preparation, so starting it at the first line of the entry point moves the
answer by that much (docs/latency.md).

Only the `--model` flag is read here, in its plain spellings (`--model X`, `--model=X`, `-m X`),
and only for `run`; anything else (a model from the settings, a repeated flag) waits for the
run command, which starts the worker as before. A guess here can only cost a worker: the run
command asks the same pool for the worker its settings name, and the pool replaces one started
with another key (a `local_threads` setting, a custom command's model). The pool's owner is the
entry point, which closes it however the process ends.
"""

from __future__ import annotations

from collections.abc import Sequence

from myrm_tui.llm.local.client import LocalWorkers

MODEL_FLAGS = ("--model", "-m")
LOCAL_PREFIX = "local/"


def local_model_named(argv: Sequence[str]) -> str | None:
    """The `local/...` model a `myrm run` command line names with --model, else None."""
    if not argv or argv[0] != "run":
        return None
    named: list[str] = []
    index = 1
    while index < len(argv):
        word = argv[index]
        if word == "--":  # what follows is the prompt, whatever it looks like
            break
        if word == "--help":  # help starts nothing
            return None
        name, equals, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if name in MODEL_FLAGS and (equals or index + 1 < len(argv)):
            named.append(inline if equals else argv[index + 1])
            index += 1 if equals else 2
            continue
        index += 1
    if len(named) != 1 or not named[0].startswith(LOCAL_PREFIX):
        return None
    return named[0]


def start_early(argv: Sequence[str]) -> LocalWorkers | None:
    """A pool with the named local model's worker already loading, or None (nothing started)."""
    model = local_model_named(argv)
    if model is None:
        return None
    from myrm_tui.llm.local.provider import start_worker

    workers = LocalWorkers()
    try:
        start_worker(workers, model, 0)  # 0: every core, the setting's default (see the docstring)
    except OSError:  # the worker could not start: the run command tries again and reports it
        workers.close()
        return None
    return workers


def pool_of(obj: object) -> LocalWorkers | None:
    """The pool the entry point started, from typer's context object (None when it started none)."""
    return obj if isinstance(obj, LocalWorkers) else None
