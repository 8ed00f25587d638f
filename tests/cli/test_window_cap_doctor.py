"""`myrm doctor` shows the context window the engine plans with (the `window_cap` setting)."""

from __future__ import annotations


def window_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "context window:" in line]
    assert len(lines) == 1, output
    return lines[0]


def test_doctor_shows_a_small_models_capped_window_and_a_frontier_models_full_one(myrm):
    small = window_line(myrm("doctor", env={"MYRM_MODEL": "gemini/gemini-2.5-flash"}).stdout)
    assert small.endswith("128,000 tokens (small model, capped from 1,048,576 by window_cap)")
    frontier = window_line(myrm("doctor", env={"MYRM_MODEL": "anthropic/claude-sonnet-4-5"}).stdout)
    assert frontier.endswith("200,000 tokens (frontier model)")
