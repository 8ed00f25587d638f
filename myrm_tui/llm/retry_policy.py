"""How long to wait between attempts of one model call.

Why full jitter: several myrm processes (or several sessions) hitting the same rate-limited key
retry at the same moments with plain exponential backoff and collide again; drawing the wait
uniformly from [0, backoff] spreads them out (AWS architecture blog "Exponential Backoff And
Jitter"). A server's Retry-After wins over our guess because it knows its own quota window.

The constants are read at call time, so tests can monkeypatch them to make retries instant.
"""

from __future__ import annotations

import random
from collections.abc import Callable

# First retry waits up to 1 s: long enough for a dropped connection or a momentary 503 to clear,
# short enough that the user barely notices.
BACKOFF_BASE_S = 1.0
# Never wait more than 20 s between attempts on our own schedule: with max_attempts=4 the worst
# case stays under a minute, after which a human should decide (the message is kept).
BACKOFF_CAP_S = 20.0
# A Retry-After longer than this is not honoured silently: we wait this long at most, and if the
# provider still refuses, the typed RateLimitError reaches the user with the hint to wait.
RETRY_AFTER_CAP_S = 60.0


def backoff_delay(attempt: int, retry_after: float | None = None, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based)."""
    if retry_after is not None and retry_after >= 0:
        return min(float(retry_after), RETRY_AFTER_CAP_S)
    # `2 ** n` is Any to mypy (a negative n would make it a float); the product here is a float either way.
    ceiling: float = min(BACKOFF_CAP_S, BACKOFF_BASE_S * (2 ** max(attempt - 1, 0)))
    return rand() * ceiling
