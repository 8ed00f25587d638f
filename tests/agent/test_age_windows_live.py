"""Comis's age windows as settings, through the live agent: `eviction_min_age`,
`observation_keep_window` and `thinking_keep_turns` change what the provider receives.

Why through the agent: a window is a promise about the prompt only once it flows from Settings
through `Agent.turn_input` into the engine's compaction (the planner) and its rendering (the
thinking cleanup) per request; the scripted provider records each request it gets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.context.rows.family import REASONING_TOOLS, family_of
from myrm_tui.context.window.config import DEFAULT_CONFIG
from myrm_tui.settings.schema import SPECS_BY_KEY
from tests.agent.agent_helpers import drive, make_agent

WINDOWS = ("thinking_keep_turns", "eviction_min_age", "observation_keep_window")
TURNS = 10
# ~300 tokens per output: under the arrival allowance (4 % of B at a 16k window), so each arrives
# whole. The first request (an anchor, never masked) and the fixed prefix alone are over the full
# tier's target (50 % of B), so the event masks every output it may: what a window keeps shows.
BODY = "".join(f"line {k:03d} of the report with some words in it\n" for k in range(18))
ANCHOR = "the task: read the reports one by one. " + " ".join(f"w{i}" for i in range(1_500))


def requests(record: Path) -> list[list[dict[str, Any]]]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def test_each_windows_default_is_the_engine_configs():
    for key in WINDOWS:
        assert SPECS_BY_KEY[key].default == getattr(DEFAULT_CONFIG, key), key
        assert SPECS_BY_KEY[key].from_workspace == "free", "it shapes the prompt, like eviction_order"


async def outputs_after_a_full_event(store, workspace, script, tmp_path, **values: Any) -> dict[int, bool]:
    """`TURNS` turns, each reading one report through grep (in process: fast); then a full event (forced, as the
    ladder runs it at 70 %) and one more request. For each turn: is its output whole in that request?"""
    for n in range(TURNS):
        (workspace / f"r{n}.txt").write_text(f"REPORT {n}\n{BODY}END {n}\n")
    record = tmp_path / f"req-{'-'.join(f'{k}{v}' for k, v in values.items())}.jsonl"
    turns: list[dict[str, Any]] = []
    for n in range(TURNS):
        turns += [
            {"tool_calls": [{"id": f"c{n}", "name": "grep", "arguments": {"pattern": ".", "path": f"r{n}.txt"}}]},
            {"text": f"read report {n}"},
        ]
    model = script(*turns, {"text": "done"}, context_window=16_000, record=str(record))
    agent = make_agent(store, workspace, model, max_output_tokens=1024, **values)
    for n in range(TURNS):
        await drive(agent, ANCHOR if n == 0 else f"read report {n}")
    event = agent.engine.assemble(agent.turn_input(force_tier="full", trigger="manual")).report.event
    assert event is not None and event.ops.get("mask"), "the full event masked outputs"
    await drive(agent, "what did the reports say?")
    sent = [str(m.get("content") or "") for m in requests(record)[-1] if m.get("role") == "tool"]
    return {n: any(f"END {n}" in t for t in sent) for n in range(TURNS)}


@pytest.mark.slow
async def test_eviction_min_age_keeps_the_outputs_of_the_last_turns_whole(store, workspace, script, tmp_path):
    plain = await outputs_after_a_full_event(store, workspace, script, tmp_path)
    aged = await outputs_after_a_full_event(store, workspace, script, tmp_path, eviction_min_age=5)
    # The outputs of the last 5 turns (fewer than 5 user messages follow them) stay whole.
    assert all(aged[n] for n in range(TURNS - 5, TURNS)), aged
    assert not all(plain[n] for n in range(TURNS - 5, TURNS)), "without the window the event reaches them"
    assert not all(aged.values()), "older outputs are still masked"


@pytest.mark.slow
async def test_observation_keep_window_keeps_the_newest_outputs_whole(store, workspace, script, tmp_path):
    plain = await outputs_after_a_full_event(store, workspace, script, tmp_path)
    kept = await outputs_after_a_full_event(store, workspace, script, tmp_path, observation_keep_window=7)
    assert all(kept[n] for n in range(TURNS - 7, TURNS)), kept
    assert not all(plain[n] for n in range(TURNS - 7, TURNS)), "without the window the event reaches them"
    assert not all(kept.values()), "older outputs are still masked"


# ---------------------------------------------------------------- thinking_keep_turns
def _script(folder: Path, name: str, record: Path, *turns: dict) -> str:
    """A script whose file name is the model name (the reasoning family is read from it)."""
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"turns": list(turns), "record": str(record)}))
    return f"scripted/{path}"


@pytest.mark.parametrize("keep", [0, 2])
async def test_thinking_keep_turns_sends_the_reasoning_of_the_last_turns_only(store, workspace, tmp_path, keep):
    record = tmp_path / f"think{keep}.jsonl"
    answers = [{"text": f"answer {n}", "reasoning": f"thought {n}"} for n in range(7)]
    model = _script(tmp_path / f"m{keep}", "deepseek-reasoner", record, *answers)
    assert family_of(model) == REASONING_TOOLS
    agent = make_agent(store, workspace, model, thinking_keep_turns=keep)
    for n in range(6):
        await drive(agent, f"question {n}")
    last = requests(record)[-1]  # sent for question 5: answers 0-4 are earlier turns
    carried = {
        m["content"]: m.get("reasoning_content") for m in last if m["role"] == "assistant" and "answer" in m["content"]
    }
    assert set(carried) == {f"answer {n}" for n in range(5)}
    kept = {text for text, reasoning in carried.items() if reasoning}
    assert kept == {f"answer {n}" for n in range(5 - keep, 5)}, carried
    # A later request keeps the window moving: the oldest kept turn leaves it.
    await drive(agent, "question 6")
    again = {m["content"] for m in requests(record)[-1] if m["role"] == "assistant" and m.get("reasoning_content")}
    assert again == {f"answer {n}" for n in range(6 - keep, 6)}, again
