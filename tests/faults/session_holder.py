"""Child process that writes a session and then holds it: the "other myrm" of the lock tests.

Usage: python session_holder.py <workspace> <session_id> [--spawn-sleeper]
Appends one note event (becoming the session's writer through the store's normal write path),
optionally starts a long `sleep` in its own process group (a tool process that outlives its
parent), prints "ready <pid> [<sleeper pid>]", then holds the store open until stdin closes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main() -> None:
    from myrm_tui.store import Store

    workspace, session_id = Path(sys.argv[1]), sys.argv[2]
    store = Store.open(workspace)
    store.append_event(session_id, "note", {"text": "held by the holder"})
    extra = ""
    if "--spawn-sleeper" in sys.argv[3:]:
        # close_fds=False: even a careless spawner must not hand the lock to its child.
        sleeper = subprocess.Popen(
            ["sleep", "600"],
            start_new_session=True,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        extra = f" {sleeper.pid}"
    print(f"ready {os.getpid()}{extra}", flush=True)
    sys.stdin.read()
    store.close()


if __name__ == "__main__":
    main()
