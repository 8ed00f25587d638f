"""The economic trigger's gate through the live agent (scripted provider, recorded requests).

Why through the agent: the gate measures growth per user turn as the agent's requests reach the
engine (one per step, tool outputs after the arrival filter), so with the default config a chat
of short exchanges must see its history compacted below the emergency threshold, and a
tool-heavy session must not: an engine fed rows by hand (tests/context/test_compaction_interval.py)
does not show that path.
"""

from __future__ import annotations

from typing import Any

import pytest

from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.store import event_kinds
from tests.agent.agent_helpers import drive, make_agent

WORDS = " ".join(f"w{i}" for i in range(60))


def compactions(store, session_id: str) -> list[dict[str, Any]]:
    return [e.data for e in store.events(session_id, event_kinds.COMPACTION)]


@pytest.mark.slow
async def test_a_chat_of_short_exchanges_is_compacted_before_the_emergency(store, workspace, script):
    turns = 90  # ~205 tokens a request: due near request 75, the emergency near 105
    model = script(*[{"text": f"answer {n}: {WORDS}"} for n in range(turns)], context_window=32_000)
    agent = make_agent(store, workspace, model)  # the default config: the trigger on, gated
    for n in range(turns):
        await drive(agent, f"question {n}: {WORDS}")
    events = compactions(store, agent.session_id)
    economic = [e for e in events if str(e.get("trigger", "")).startswith("economic")]
    assert economic, f"no economic event in {[e.get('trigger') for e in events]}"
    limit = agent.turn_input().budget().prompt_limit
    assert all(e["tokens_before"] < DEFAULT_CONFIG.emergency_ratio * limit for e in economic)


@pytest.mark.slow
async def test_a_tool_heavy_session_is_left_to_the_emergency(store, workspace, script):
    """Two requests a turn (the tool call, then the answer after its ~1.2k-token output): ~600
    tokens a request, which a per-request gate at 1,000 let through (economic events at 75 %)."""
    turns = 40
    (workspace / "out.txt").write_text("\n".join(f"line {i}: " + "x" * 50 for i in range(60)))
    steps: list[dict[str, Any]] = []
    for n in range(turns):
        steps.append({"tool_calls": [{"id": f"c{n}", "name": "bash", "arguments": {"command": f"cat out.txt # {n}"}}]})
        steps.append({"text": f"read it {n}"})
    model = script(*steps, context_window=32_000)
    agent = make_agent(store, workspace, model)  # the default config: the trigger on, gated
    for n in range(turns):
        await drive(agent, f"step {n}: read out.txt again")
    triggers = [str(e.get("trigger", "")) for e in compactions(store, agent.session_id)]
    assert triggers, "the session reached the emergency"
    assert not any(t.startswith("economic") for t in triggers), triggers
