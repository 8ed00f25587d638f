"""The quiet line under a reply, and the live figures in the status line (pure; no Textual).

Why words only for what is known: a local model has no price and a provider without usage has
no token counts; a missing figure is left out, never shown as 0 or $0.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from myrm_tui.agent.reply_figures import ReplyFigures
from myrm_tui.tui.constants import LIVE_CHARS_PER_TOKEN
from myrm_tui.tui.formatting import format_duration, format_tokens


def format_cost(cost: float) -> str:
    """Cents and below need four decimals to be anything but "$0.00"."""
    return f"${cost:.4f}" if cost < 0.01 else f"${cost:.2f}"


def figures_line(figures: ReplyFigures) -> str:
    """ "1.2k in · 340 out · 62% cached · $0.0042 · 3.4 s · 86 tok/s"."""
    parts: list[str] = []
    if figures.prompt_tokens or figures.completion_tokens:
        parts += [f"{format_tokens(figures.prompt_tokens)} in", f"{format_tokens(figures.completion_tokens)} out"]
    share = figures.cached_share
    if share:
        parts.append(f"{share * 100:.0f}% cached")
    if figures.cost is not None:
        parts.append(format_cost(figures.cost))
    if figures.elapsed_s is not None:
        parts.append(format_duration(figures.elapsed_s))
    speed = figures.tokens_per_s
    if speed is not None:
        parts.append(f"{speed:.0f} tok/s")
    return " · ".join(parts)


@dataclass
class StreamMeter:
    """One model call as it streams: elapsed time, then an estimated output speed."""

    started: float
    clock: Callable[[], float] = time.monotonic
    first_output_at: float | None = None
    chars: int = 0

    def add(self, text: str) -> None:
        if not text:
            return
        if self.first_output_at is None:
            self.first_output_at = self.clock()
        self.chars += len(text)

    def text(self, waiting: str | None = None) -> str:
        """ "thinking 2.1 s" (or what the call waits on, `waiting`), then "streaming 4.3 s · ~38 tok/s"."""
        now = self.clock()
        elapsed = format_duration(max(0.0, now - self.started))
        if self.first_output_at is None:
            return f"{waiting or 'thinking'} {elapsed}"
        decode = now - self.first_output_at
        if decode <= 0:
            return f"streaming {elapsed}"
        speed = self.chars / LIVE_CHARS_PER_TOKEN / decode
        return f"streaming {elapsed} · ~{speed:.0f} tok/s"
