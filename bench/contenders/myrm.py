"""myrm through its real per-turn entry point, `myrm_tui.replay.replay` (what `myrm replay` runs).

`MyrmCli` runs the same replay through the `myrm replay` command in a subprocess; the harness
checks both give identical prompts on one session, so the in-process figures are the CLI's.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bench.contenders.base import Contender, RunConfig, SharedCounter, tool_schemas

CLI_TIMEOUT_S = 600


class Myrm(Contender):
    name = "myrm"
    family = "myrm"
    uses_summarizer = True
    note = "myrm context engine (myrm_tui.replay.replay, in process)"

    def missing(self) -> str | None:
        try:
            import myrm_tui.replay  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__}: {exc})"
        return None

    def run(self, lines: Iterable[dict[str, Any]], config: RunConfig) -> Iterator[dict[str, Any]]:
        from myrm_tui.context.summarizers import SUMMARIZERS
        from myrm_tui.replay import ReplayOptions, replay

        tools = tool_schemas()
        # Copies per line: the engine may keep or rewrite what it ingests; other contenders reuse the lines.
        fresh = (copy.deepcopy(line) for line in lines)
        # The same fake, metered like every peer's: its tokens go to B5 and its time out of B1.
        # Registered under a private name for this run only (replay looks summarizers up by name).
        # Only the fake itself runs inside the engine's call; its tokens are counted after the
        # turn, so metering adds no time the engine could notice.
        fake = SUMMARIZERS[config.summarizer]
        counter = SharedCounter()
        pending: list[tuple[list[dict[str, Any]], str]] = []
        spent = [0.0]

        def metered(messages: Any) -> str:
            started = time.perf_counter()
            out = fake(messages)
            spent[0] += time.perf_counter() - started
            pending.append((list(messages), out))
            return out

        private = f"bench-metered-{config.summarizer}-{id(pending)}"
        SUMMARIZERS[private] = metered
        options = ReplayOptions(window=config.window, summarizer=private, max_output_tokens=config.reserve)
        try:
            for record in replay(fresh, options):
                if "prompt" in record:
                    record["tools"] = tools  # the request carries them; count them like every contender's
                    record["engine_ms"] = round(max(0.0, record["engine_ms"] - spent[0] * 1000), 3)
                    record["summarizer_tokens"] = sum(counter.messages(m) + counter.text(o) for m, o in pending)
                    pending.clear()
                    spent[0] = 0.0
                yield record
        finally:
            SUMMARIZERS.pop(private, None)


def cli_replay(session: Path, config: RunConfig) -> list[dict[str, Any]]:
    """The OUT lines of `myrm replay SESSION --window W --summarizer S` (a real subprocess)."""
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        out = Path(tmp) / "out.jsonl"
        command = [sys.executable, "-m", "myrm_tui", "replay", str(session), "--window", str(config.window),
                   "--summarizer", config.summarizer, "--out", str(out)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"myrm replay exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
        with out.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
