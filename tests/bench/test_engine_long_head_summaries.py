"""A regression found by `scripts/replay_figures.py`: the seeded 400-turn coding session at 32k
with the `head` summarizer ran out of room at turn 269 (ContextExhausted). Fragmented removal
around the protected latest user message left ~50 small summary nodes of mixed depths that no
same-depth fold joined: 94 % of the budget. The squeeze fold caps the summary area."""

from __future__ import annotations

import pytest

from bench.workload import generate
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.replay import ReplayOptions, replay


@pytest.mark.slow
def test_coding_400_at_32k_with_head_summaries_keeps_summaries_under_their_cap():
    lines, _ = generate("coding", 400, 1)
    budget = None
    worst = 0.0
    turns = 0
    for record in replay(lines, ReplayOptions(window=32_000, summarizer="head")):
        if "prompt" not in record:
            continue
        turns += 1
        report = record["events"][0]
        budget = report["budget"]["prompt_limit"]
        assert record["tokens"] <= budget
        summaries = sum(
            count_message_tokens(m, "gpt-4o")
            for m in record["prompt"]
            if isinstance(m.get("content"), str)
            and m["content"].startswith("<context-note")
            and "[summary S" in m["content"]
        )
        worst = max(worst, summaries / budget)
    assert turns == 400
    # The cap is enforced at each event; between events only new leaves can add a little.
    assert worst <= DEFAULT_CONFIG.summary_cap_ratio + 0.10, worst
