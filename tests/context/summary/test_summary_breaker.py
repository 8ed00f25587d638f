"""Per-(session, model) breaker: opens after 3 failures, cooldown by class, one half-open probe."""

from __future__ import annotations

from myrm_tui.context.summary.breaker import (
    CLOSED,
    HALF_OPEN,
    OPEN,
    PERMANENT,
    PERMANENT_COOLDOWN_S,
    TRANSIENT,
    TRANSIENT_COOLDOWN_S,
    SummarizerBreaker,
    error_class,
)
from myrm_tui.llm.errors import AuthenticationError, ModelNotFoundError, RateLimitError, ServerError


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_three_failures_open_then_half_open_probe_closes_on_success():
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    for _ in range(2):
        assert breaker.allow("s", "m")
        breaker.record_failure("s", "m", TRANSIENT)
    assert breaker.state("s", "m") == CLOSED
    breaker.record_failure("s", "m", TRANSIENT)
    assert breaker.state("s", "m") == OPEN and not breaker.allow("s", "m")
    assert breaker.retry_in("s", "m") == TRANSIENT_COOLDOWN_S
    clock.now += TRANSIENT_COOLDOWN_S - 1
    assert not breaker.allow("s", "m")
    clock.now += 1
    assert breaker.state("s", "m") == HALF_OPEN
    assert breaker.allow("s", "m"), "the probe"
    assert not breaker.allow("s", "m"), "only one probe at a time"
    breaker.record_success("s", "m")
    assert breaker.state("s", "m") == CLOSED and breaker.allow("s", "m")


def test_failed_probe_reopens_at_once():
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    for _ in range(3):
        breaker.record_failure("s", "m")
    clock.now += TRANSIENT_COOLDOWN_S
    assert breaker.allow("s", "m")
    breaker.record_failure("s", "m", TRANSIENT)
    assert breaker.state("s", "m") == OPEN and not breaker.allow("s", "m")


def test_each_failed_probe_doubles_the_cooldown_up_to_the_permanent_one_and_success_resets_it():
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    for _ in range(3):
        breaker.record_failure("s", "m", TRANSIENT)
    waits = []
    for _ in range(8):
        waits.append(breaker.retry_in("s", "m"))
        clock.now += breaker.retry_in("s", "m")
        assert breaker.allow("s", "m"), "the probe"
        breaker.record_failure("s", "m", TRANSIENT)
    assert waits == [60.0, 120.0, 240.0, 480.0, 960.0, 1800.0, 1800.0, 1800.0]
    clock.now += breaker.retry_in("s", "m")
    assert breaker.allow("s", "m")
    breaker.record_success("s", "m")
    for _ in range(3):
        breaker.record_failure("s", "m", TRANSIENT)
    assert breaker.retry_in("s", "m") == TRANSIENT_COOLDOWN_S, "a closed breaker forgets the backoff"


def test_permanent_errors_cool_down_for_half_an_hour():
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    for _ in range(3):
        breaker.record_failure("s", "m", PERMANENT, "bad key")
    clock.now += TRANSIENT_COOLDOWN_S * 5
    assert breaker.state("s", "m") == OPEN
    clock.now += PERMANENT_COOLDOWN_S
    assert breaker.state("s", "m") == HALF_OPEN


def test_breakers_are_isolated_per_session_and_model():
    breaker = SummarizerBreaker(clock=Clock())
    for _ in range(3):
        breaker.record_failure("s1", "m1")
    assert breaker.state("s1", "m1") == OPEN
    assert breaker.allow("s2", "m1") and breaker.allow("s1", "m2")


def test_success_resets_the_failure_count():
    breaker = SummarizerBreaker(clock=Clock())
    breaker.record_failure("s", "m")
    breaker.record_failure("s", "m")
    breaker.record_success("s", "m")
    breaker.record_failure("s", "m")
    breaker.record_failure("s", "m")
    assert breaker.state("s", "m") == CLOSED


def test_a_lost_probe_frees_the_slot_after_its_lease():
    clock = Clock()
    breaker = SummarizerBreaker(clock=clock)
    for _ in range(3):
        breaker.record_failure("s", "m")
    clock.now += TRANSIENT_COOLDOWN_S
    assert breaker.allow("s", "m")
    clock.now += TRANSIENT_COOLDOWN_S
    assert breaker.allow("s", "m"), "the first prober never reported back"


def test_error_classes():
    assert error_class(AuthenticationError("no")) == PERMANENT
    assert error_class(ModelNotFoundError("no")) == PERMANENT
    assert error_class(RateLimitError("slow")) == TRANSIENT
    assert error_class(ServerError("500")) == TRANSIENT
    assert error_class(ValueError("bad json")) == TRANSIENT
