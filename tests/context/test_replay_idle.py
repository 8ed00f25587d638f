"""`myrm replay` with user pauses (`gap_s`): the virtual clock runs on by the pause, so the
engine sees a cold provider cache and the cache-TTL prune tier runs the tier it deferred; with
the tier switched off it keeps waiting; with the simulated keep-alive the cache stays warm and
the OUT line lists the probes (agent/cache_warmth.py's schedule)."""

from __future__ import annotations

import dataclasses

import pytest

from myrm_tui.agent.cache_warmth import KEEPALIVE_MARGIN_S
from myrm_tui.context.window.config import CACHE_TTL_S, DEFAULT_CONFIG
from myrm_tui.replay import TURN_SECONDS, ReplayOptions, replay
from tests.context.test_replay import session_lines

WINDOW = 16_000
PAUSE_S = 900.0  # 15 minutes: past the replay model's 5-minute cache lifetime


def _ladders(record: dict) -> list[dict]:
    return [e["ladder"] for e in record["events"] if isinstance(e, dict) and "ladder" in e]


def _run(lines, **options) -> list[dict]:
    return [r for r in replay(lines, ReplayOptions(window=WINDOW, **options)) if "prompt" in r]


@pytest.mark.slow
def test_a_pause_past_the_ttl_lets_the_deferred_tier_run_and_keepalive_keeps_it_waiting():
    plain = _run(session_lines())
    # The first turn whose tier waits for the warm cache (it exists: 30 turns of logs at 16k).
    index, deferred = next((i, d) for i, r in enumerate(plain) for d in _ladders(r)[:1] if d["deferred"])
    turn = plain[index]["turn"]
    lines = [line for line in session_lines() if "probe" not in line and line["turn"] <= turn]
    lines[-1] = {**lines[-1], "gap_s": PAUSE_S}

    cold = _run(lines)[-1]
    assert cold["gap_s"] == PAUSE_S and "keepalive" not in cold
    first = _ladders(cold)[0]
    assert not first["deferred"] and "cache cold" in first["action"]

    off = _run(lines, config=dataclasses.replace(DEFAULT_CONFIG, cache_ttl_prune=False))[-1]
    assert _ladders(off)[0] == {**deferred, "action": "deferred: cache-TTL prune is off"}

    kept = _run(lines, keepalive=True)[-1]
    step = CACHE_TTL_S["default"] - KEEPALIVE_MARGIN_S
    assert kept["keepalive"] == [step * k for k in range(1, 10) if step * k < PAUSE_S + TURN_SECONDS]  # 3
    assert _ladders(kept)[0] == deferred  # the cache stayed warm: the tier still waits
    assert kept["prompt"] == plain[index]["prompt"]  # same prompt as without the pause


def test_a_session_without_pauses_has_no_pause_fields():
    lines = [line for line in session_lines() if "probe" not in line][:3]
    assert all("gap_s" not in r and "keepalive" not in r for r in _run(lines, keepalive=True))
