"""The `myrm` console script: what runs before typer loads.

Why its own module: the script's entry point is imported before anything else, and `cli.py`
imports typer and click at its top (importing `cli` took 75 ms here, `entry` 14 ms). A plain
chat launch never needs them (`cli_commands/plain_launch.py`), and `myrm run --model local/...`
wants its model worker started before they load (`cli_commands/run/early_worker.py`). So the
script enters here, and `cli.main` is reached only for everything else.
"""

from __future__ import annotations

import sys

# 128 + SIGINT, as cli.main and plain_launch exit on Ctrl+C.
EXIT_INTERRUPTED = 130


def main() -> None:
    from myrm_tui.cli_commands.plain_launch import launch_if_plain

    argv = sys.argv[1:]
    code = launch_if_plain(argv)  # the chat without typer's parse; None: not a plain launch
    if code is not None:
        raise SystemExit(code)
    early = None
    try:
        from myrm_tui.cli_commands.run.early_worker import start_early

        early = start_early(argv)
        from myrm_tui.cli import main as cli_main

        cli_main(early)
    except KeyboardInterrupt:  # Ctrl+C while the CLI loads, before typer took over
        raise SystemExit(EXIT_INTERRUPTED) from None
    finally:
        if early is not None:
            early.close()
