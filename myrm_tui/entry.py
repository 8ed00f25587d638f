"""The `myrm` console script: what runs before typer loads.

Why its own module: the script's entry point is imported before anything else, and `cli.py`
imports typer and click (~0.1 s) at its top. A plain chat launch never needs them
(`cli_commands/plain_launch.py`), and `myrm run --model local/...` wants its model worker
started before they load (`cli_commands/run/early_worker.py`). So the script enters here, and
`cli.main` is reached only for everything else.
"""

from __future__ import annotations

import sys


def main() -> None:
    from myrm_tui.cli_commands.plain_launch import launch_if_plain

    argv = sys.argv[1:]
    code = launch_if_plain(argv)  # the chat without typer's parse; None: not a plain launch
    if code is not None:
        raise SystemExit(code)
    from myrm_tui.cli_commands.run.early_worker import start_early

    early = start_early(argv)
    try:
        from myrm_tui.cli import main as cli_main

        cli_main(early)
    finally:
        if early is not None:
            early.close()
