"""`myrm replay`: a recorded session through the real agent (formats: docs/replay-format.md)."""

from __future__ import annotations

import os
from pathlib import Path

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import EXIT_OK, EXIT_TURN_ERROR, EXIT_USAGE, err


def replay_command(session_file: Path, window: int, summarizer: str, out: Path | None, max_output: int) -> int:
    from myrm_tui.replay import ReplayOptions, run_replay

    if max_output >= window // 2:
        err(
            f"error: --max-output {max_output:,} leaves too little of a {window:,}-token window; use less "
            "than half of it."
        )
        return EXIT_USAGE
    options = ReplayOptions(window=window, summarizer=summarizer, max_output_tokens=max_output)
    if out is not None:
        try:
            out_fd = _open_out(out)
        except OSError as exc:
            err(f"error: cannot write --out {out}: {exc.strerror or exc} (a link or not a regular file is refused)")
            return EXIT_USAGE
    try:
        if out is None:
            counts = run_replay(session_file, output.json_lines_stdout(), options)
        else:
            with os.fdopen(out_fd, "w", encoding="utf-8") as handle:
                counts = run_replay(session_file, handle, options)
    except ValueError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - one readable line, not a traceback
        err(f"error: replay failed: {type(exc).__name__}: {exc}")
        return EXIT_TURN_ERROR
    err(f"replayed {counts['turns']} turns and {counts['probes']} probes")
    return EXIT_OK


def _open_out(out: Path) -> int:
    """`--out` opened through its folder's handle and never through a link (a command of the
    replayed session, or anything else running, could swap the file for a link between a check
    and the open); emptied on the descriptor once it is known to be a regular file."""
    from myrm_tui.fenced_files import open_root

    with open_root(out.parent) as folder:
        fd = folder.open_regular(out.name, os.O_WRONLY | os.O_CREAT)
    os.ftruncate(fd, 0)
    return fd
