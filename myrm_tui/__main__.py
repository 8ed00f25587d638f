"""`python -m myrm_tui`: a plain chat launch skips importing typer (cli_commands/plain_launch.py)."""

import sys

from myrm_tui.cli_commands.plain_launch import launch_if_plain

code = launch_if_plain(sys.argv[1:])
if code is None:
    from myrm_tui.cli import main

    main()
else:
    raise SystemExit(code)
