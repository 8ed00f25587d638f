"""Keys before the stream: a streaming frame waits while a typed key is not on screen yet.

Why: a streaming reply's frame renders its rows in a worker thread (which takes the GIL from the
event loop) and then asks for a layout of the screen. A key typed just before that frame waited
for both: the thread slowed the loop's handling of the key, and the key's repaint, a few rows of
the prompt, was done by the same screen update as the layout of the whole transcript
(docs/tui-benchmarks.md, T2: key → next frame p99 55-62 ms at 1,000-2,000 tokens/s). Here the
prompt says when a key arrived and when it painted it (`PromptArea`), and the reply's render loop
(`LiveReply`) waits in between, neither starting a render nor handing its rows to the screen: the
key's screen update paints the prompt alone, with the GIL to itself.

The wait is bounded (`INPUT_HOLD_MAX_S`): a key that paints nothing (a binding of another widget,
a modal screen on top) or a held-down key repeating holds the stream back by at most that, at
each of a frame's two waits; no text is lost either way, the next frame shows it.
"""

from __future__ import annotations

import asyncio
import time

from myrm_tui.tui.constants import INPUT_HOLD_MAX_S


class InputPriority:
    """Whether a key arrived that the screen has not painted yet. The chat screen owns one and
    hands it down to its prompt (which reports keys) and to each streaming reply (which waits)."""

    def __init__(self) -> None:
        self._painted = asyncio.Event()
        self._painted.set()
        self.holds = 0  # times a frame waited for a key: tests count them
        self.last_key = float("-inf")  # time.monotonic() of the last key the prompt took

    @property
    def pending(self) -> bool:
        return not self._painted.is_set()

    def key_arrived(self) -> None:
        self._painted.clear()
        self.last_key = time.monotonic()

    def quiet_for(self) -> float:
        """Seconds since the last key (the after-turn collection waits for a pause in typing)."""
        return time.monotonic() - self.last_key

    def key_painted(self) -> None:
        self._painted.set()

    async def yield_to_input(self) -> None:
        """Return once no key waits to be painted, or after INPUT_HOLD_MAX_S."""
        if self._painted.is_set():
            return
        self.holds += 1
        try:
            await asyncio.wait_for(self._painted.wait(), INPUT_HOLD_MAX_S)
        except TimeoutError:
            self._painted.set()  # nothing painted it: no key is still waiting for the next frame
