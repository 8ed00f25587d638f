"""Circuit breaker for summarizer calls, per (session, model).

Why per (session, model), not process-global: one session with a broken summarizer
model must not switch summaries off for every other session, and switching the summarizer model
starts from a closed breaker. While open, callers use the extractive fallback (no call made).

States: closed → (FAILURE_THRESHOLD consecutive failures) → open for a cooldown chosen by the
error class of the last failure → half-open: exactly one probe call is let through; its success
closes the breaker, its failure re-opens it at once, for twice the previous cooldown (up to
the permanent one). Why back off: a summarizer whose answers the auditor keeps rejecting was
probed again after every one-minute turn, four paid calls each time, for the whole session
(8.6 M summarizer tokens on a 400-turn chat); a provider that is really down for a minute is
still retried after a minute.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

# Three in a row: one failure is noise (a timeout), three is a pattern worth stopping paid calls for.
FAILURE_THRESHOLD = 3
# Transient (rate limit, 5xx, timeout, bad output): providers recover within about a minute.
TRANSIENT_COOLDOWN_S = 60.0
# Auth / model-not-found: a person has to fix config; probing every minute would only spam the
# provider and the log. Half an hour is long enough to stop the noise and short enough that a
# fixed key is picked up in the same working session.
PERMANENT_COOLDOWN_S = 30 * 60.0

# A probe whose caller never reported back (cancelled turn) frees the slot after this long.
PROBE_LEASE_S = TRANSIENT_COOLDOWN_S

TRANSIENT = "transient"
PERMANENT = "permanent"
COOLDOWNS = {TRANSIENT: TRANSIENT_COOLDOWN_S, PERMANENT: PERMANENT_COOLDOWN_S}

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"


def error_class(exc: BaseException | None) -> str:
    """PERMANENT for failures a retry cannot fix (auth, unknown model), else TRANSIENT."""
    from myrm_tui.llm.errors import AuthenticationError, ModelNotFoundError

    return PERMANENT if isinstance(exc, (AuthenticationError, ModelNotFoundError)) else TRANSIENT


@dataclass
class _State:
    failures: int = 0
    opened_at: float | None = None
    cooldown: float = 0.0
    probing: bool = False
    probe_started: float = 0.0
    last_error: str = ""
    reopened: int = 0  # failed probes since the breaker last closed: the backoff exponent


@dataclass
class SummarizerBreaker:
    clock: Callable[[], float] = time.monotonic
    threshold: int = FAILURE_THRESHOLD
    _states: dict[tuple[str, str], _State] = field(default_factory=dict)

    def _get(self, session: str, model: str) -> _State:
        return self._states.setdefault((session, model), _State())

    def state(self, session: str, model: str) -> str:
        s = self._states.get((session, model))
        if s is None or s.opened_at is None:
            return CLOSED
        return HALF_OPEN if self.clock() - s.opened_at >= s.cooldown else OPEN

    def allow(self, session: str, model: str) -> bool:
        """May a call be made now? In half-open, only the first caller gets the probe."""
        current = self.state(session, model)
        if current == CLOSED:
            return True
        if current == OPEN:
            return False
        s = self._get(session, model)
        if s.probing and self.clock() - s.probe_started < PROBE_LEASE_S:
            return False
        s.probing, s.probe_started = True, self.clock()
        return True

    def record_success(self, session: str, model: str) -> None:
        self._states[(session, model)] = _State()

    def record_failure(self, session: str, model: str, kind: str = TRANSIENT, error: str = "") -> None:
        s = self._get(session, model)
        s.failures += 1
        s.last_error = error
        if s.probing or s.failures >= self.threshold:
            base = COOLDOWNS.get(kind, TRANSIENT_COOLDOWN_S)
            if s.probing:
                s.reopened += 1
            s.opened_at = self.clock()
            s.cooldown = min(PERMANENT_COOLDOWN_S, base * 2**s.reopened)
            s.probing = False

    def retry_in(self, session: str, model: str) -> float:
        """Seconds until the next probe is allowed (0 when closed or half-open)."""
        s = self._states.get((session, model))
        if s is None or s.opened_at is None:
            return 0.0
        return max(0.0, s.opened_at + s.cooldown - self.clock())
