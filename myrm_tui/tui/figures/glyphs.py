"""Tiny text graphics (ring, sparkline) as pure functions, so widgets and tests share them."""

from __future__ import annotations

from collections.abc import Sequence

# A ring of 8 braille dots over two cells (a 4×4 dot grid without its corners), clockwise
# from twelve o'clock. Each entry is (cell, dot bit) in the Unicode braille block: dots 1-3 and
# 7 are the left column top to bottom, 4-6 and 8 the right column.
_RING_DOTS: tuple[tuple[int, int], ...] = (
    (1, 0x01),  # top, right of centre
    (1, 0x10),  # right side, upper
    (1, 0x20),  # right side, lower
    (1, 0x40),  # bottom, right of centre
    (0, 0x80),  # bottom, left of centre
    (0, 0x04),  # left side, lower
    (0, 0x02),  # left side, upper
    (0, 0x08),  # top, left of centre
)
_BRAILLE_BASE = 0x2800
_SPARK = "▁▂▃▄▅▆▇█"


def braille_ring(ratio: float | None) -> str:
    """Two braille cells drawing the filled part of a ring (clockwise from the top).

    Any usage above zero lights at least one dot, so "almost empty" never looks like "unknown";
    an unknown ratio draws the whole ring dimmed by the caller (all dots, same glyphs as 100%).
    """
    if ratio is None:
        lit = len(_RING_DOTS)
    else:
        clamped = min(max(ratio, 0.0), 1.0)
        lit = round(clamped * len(_RING_DOTS))
        if clamped > 0 and lit == 0:
            lit = 1
    cells = [0, 0]
    for cell, bit in _RING_DOTS[:lit]:
        cells[cell] |= bit
    return "".join(chr(_BRAILLE_BASE + bits) for bits in cells)


def sparkline(values: Sequence[float], width: int) -> str:
    """The newest `width` values as block heights scaled to their own min..max."""
    tail = list(values)[-width:] if width > 0 else []
    if not tail:
        return ""
    low, high = min(tail), max(tail)
    span = high - low
    if span <= 0:
        return _SPARK[len(_SPARK) // 2] * len(tail)
    top = len(_SPARK) - 1
    return "".join(_SPARK[round((v - low) / span * top)] for v in tail)
