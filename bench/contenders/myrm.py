"""myrm through `myrm_tui.replay.replay` (what `myrm replay` runs): the recorded session fed
to the real agent turn by turn.

`MyrmCli` runs the same replay through the `myrm replay` command in a subprocess; the harness
checks both give identical prompts on one session, so the in-process figures are the CLI's.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bench.contenders.base import Contender, RunConfig, tool_schemas

CLI_TIMEOUT_S = 600


class Myrm(Contender):
    name = "myrm"
    family = "myrm"
    uses_summarizer = True
    note = "myrm agent on the recorded session (myrm_tui.replay.replay, in process)"

    def missing(self) -> str | None:
        try:
            import myrm_tui.replay  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__}: {exc})"
        return None

    def run(self, lines: Iterable[dict[str, Any]], config: RunConfig) -> Iterator[dict[str, Any]]:
        """The replay's own lines. It reports `engine_ms` (the engine's assemble time, summed
        over the turn's requests) and `summarizer_tokens` (what its summary client sent to and
        got from the fake summarizer model); the fake runs behind litellm in the background
        step after each turn, so its time is in neither figure."""
        from myrm_tui.replay import ReplayOptions, replay

        tools = tool_schemas()
        # Copies per line: the agent may keep or rewrite what it is fed; other contenders reuse the lines.
        fresh = (copy.deepcopy(line) for line in lines)
        options = ReplayOptions(window=config.window, summarizer=config.summarizer, max_output_tokens=config.reserve)
        for record in replay(fresh, options):
            if "prompt" in record:
                record["tools"] = tools  # the request carries them; count them like every contender's
            yield record


def cli_replay(session: Path, config: RunConfig) -> list[dict[str, Any]]:
    """The OUT lines of `myrm replay SESSION --window W --summarizer S` (a real subprocess)."""
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        out = Path(tmp) / "out.jsonl"
        command = [
            sys.executable,
            "-m",
            "myrm_tui",
            "replay",
            str(session),
            "--window",
            str(config.window),
            "--summarizer",
            config.summarizer,
            "--out",
            str(out),
        ]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"myrm replay exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
        with out.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
