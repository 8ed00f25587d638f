"""When the cyclic collector's full passes run: between turns, and over the session's objects only.

Why: a full (oldest-generation) pass walks every tracked object of the process, and after
litellm's import that is ~430k objects that never die: 250-450 ms of CPU that lands wherever the
allocation count runs out, often inside a turn (measured: 35 such passes in an 800-turn replay,
each collecting nothing, two of them inside a request's prompt assembly; `scripts/b1_cpu.py`).
So a turn holds full passes back (the young generations still run) and its end lets them run
again, while the user reads; and once per process the heap the first turn found (imports, caches)
is frozen out of the collector's reach, which leaves each later full pass the session's own
objects (4-60 ms). The TUI holds them from the moment a message is sent and runs the pass itself
once no key arrives (tui/session/turn_runner.py); a turn that finds them held leaves that to it.
"""

from __future__ import annotations

import gc

# CPython's own thresholds, read once at import (before anything here changes them).
DEFAULT_THRESHOLDS = gc.get_threshold()
# While held, a full pass waits until this many middle-generation passes have run (CPython's
# default is 10): in practice it waits for the end of the turn.
HELD_GEN2_THRESHOLD = 10_000


def hold_full_passes() -> bool:
    """Hold full passes back; False when they were held already (the caller that held them
    releases them)."""
    young, middle, oldest = gc.get_threshold()
    if oldest == HELD_GEN2_THRESHOLD:
        return False
    gc.set_threshold(young, middle, HELD_GEN2_THRESHOLD)
    return True


def release_full_passes() -> None:
    """CPython's thresholds again: a full pass the turn held back runs at the next middle-
    generation pass (if CPython's own heuristic still wants it)."""
    gc.set_threshold(*DEFAULT_THRESHOLDS)


def freeze_startup_heap() -> None:
    """Move every object alive now out of the collector's reach, once per process. Frozen
    objects are still freed when nothing refers to them; only a cycle among them is never
    collected. Once: a later freeze would catch a session just closed, still waiting for its
    collection, and make it immortal, engine and all (a thaw and a full pass instead costs
    seconds at every session switch on a loaded 2-core box)."""
    if not gc.get_freeze_count():
        gc.freeze()
