"""The embedded model's worker processes this test process started (for tests that check who
owns them and when they end)."""

from __future__ import annotations

import os
from pathlib import Path

# The worker's module, as its command line names it (llm/local/client.py starts `python -m` it).
WORKER_MODULE = b"myrm_tui.llm.local.worker"


def worker_pids() -> set[int]:
    """Live (not zombie) children of this process that run the worker module."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == os.getpid() and state != "Z" and WORKER_MODULE in command:
            found.add(int(entry.name))
    return found
