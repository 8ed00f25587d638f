"""Helpers for TUI pilots (imported by the test modules; fixtures live in conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from myrm_tui.settings import Settings

# Headless pilots on a shared 2-core box: generous, but a hang still fails in reasonable time.
WAIT_TIMEOUT_S = 30.0
SIZE = (110, 40)


def scripted_settings(model: str, **values: Any) -> Settings:
    return Settings().with_values(**{"model": model, "approval": "ask", **values})


async def wait_until(
    pilot, predicate: Callable[[], object], timeout: float = WAIT_TIMEOUT_S, what: str = "condition"
) -> None:
    """Let the app run until `predicate()` is true (pilots spawn tasks; one pause is not enough)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def type_text(pilot, text: str) -> None:
    keys = ["space" if ch == " " else ch for ch in text]
    await pilot.press(*keys)
