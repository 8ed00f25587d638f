"""When the cyclic collector's full passes run: between turns, and over the session's objects only.

Why: a full (oldest-generation) pass walks every tracked object of the process, and after
litellm's import that is ~430k objects that never die: 250-450 ms of CPU that lands wherever the
allocation count runs out, often inside a turn (measured: 35 such passes in an 800-turn replay,
each collecting nothing, two of them inside a request's prompt assembly; `scripts/b1_cpu.py`).
So a turn holds full passes back (the young generations still run) and its end lets them run
again, while the user reads; and once per process, at the first idle step, the heap (imports,
caches) is frozen out of the collector's reach after one full pass, which leaves each later pass
the session's own objects (20-60 ms). The TUI holds them from the moment a message is sent until
it runs the pass itself once no key arrives (tui/session/turn_runner.py), and freezes the heap
when its engine is prepared.
"""

from __future__ import annotations

import gc

# CPython's own thresholds, read once at import (before anything here changes them).
DEFAULT_THRESHOLDS = gc.get_threshold()
# While held, a full pass waits until this many middle-generation passes have run (CPython's
# default is 10): in practice it waits for the end of the turn.
HELD_GEN2_THRESHOLD = 10_000


# Who holds full passes now. Turns are counted: two sessions' overlapping turns (an ACP server)
# never release each other's hold. The chat's hold is one flag: it lasts from a message until
# the chat runs the held pass itself, and a new session's chat takes over a hold never let go.
_turns = 0
_chat_holds = False


def _apply() -> None:
    young, middle, _ = gc.get_threshold()
    if _turns or _chat_holds:
        gc.set_threshold(young, middle, HELD_GEN2_THRESHOLD)
    else:
        gc.set_threshold(*DEFAULT_THRESHOLDS)


def hold_full_passes() -> None:
    """A turn starts: full passes wait until the matching `release_full_passes`."""
    global _turns
    _turns += 1
    _apply()


def release_full_passes() -> None:
    """A turn ends. With no other hold left, CPython's thresholds again: a full pass held back
    runs at the next middle-generation pass (if CPython's own heuristic still wants it)."""
    global _turns
    _turns = max(0, _turns - 1)
    _apply()


def hold_until_chat_collects() -> None:
    """The chat sent a message: full passes wait until it runs one itself (`chat_collected`)."""
    global _chat_holds
    _chat_holds = True
    _apply()


def chat_collected() -> None:
    """The chat ran the held pass (while the user reads, not types)."""
    global _chat_holds
    _chat_holds = False
    _apply()


def freeze_startup_heap(*, collect: bool = False) -> None:
    """Move every object alive now out of the collector's reach, once per process. Frozen
    objects are still freed when nothing refers to them; only a cycle among them is never
    collected, so `collect` first runs a full pass (250-450 ms: only where nobody waits, the
    idle step after a turn) and the garbage of the turn is not frozen with the heap. Once: a
    later freeze would catch a session just closed, still waiting for its collection, and make
    it immortal, engine and all (a thaw and a full pass instead costs seconds at every session
    switch on a loaded 2-core box)."""
    if not gc.get_freeze_count():
        if collect:
            gc.collect()
        gc.freeze()
